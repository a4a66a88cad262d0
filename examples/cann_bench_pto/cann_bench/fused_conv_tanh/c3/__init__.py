"""Class c3 of fused_conv_tanh: bfloat16 inputs."""
