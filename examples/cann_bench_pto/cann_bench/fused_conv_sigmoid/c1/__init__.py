"""Class c1 of fused_conv_sigmoid: float16 inputs."""
