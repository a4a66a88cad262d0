"""Class c3 of fused_conv_sigmoid: bfloat16 inputs."""
