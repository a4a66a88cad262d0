"""Class c2 of fused_conv_tanh: float32 inputs."""
