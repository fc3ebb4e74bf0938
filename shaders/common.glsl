// shared GLSL
