"""Class c2 of fused_conv_sigmoid: float32 inputs."""
