"""Class c1 of fused_conv_tanh: float16 inputs."""
