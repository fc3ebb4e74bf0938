#version 450
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

// The build's feature test (shaders/meson.build): a glslang that compiles
// this compiles the cooperative-matrix kernels (Debian 12's 12.0 does not).

layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer Buf { float16_t v[]; };

void main()
{
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    coopMatLoad(a, v, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b, v, 256, 16, gl_CooperativeMatrixLayoutColumnMajor);
    c = coopMatMulAdd(a, b, c);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> h = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(c);
    coopMatStore(h, v, 512, 16, gl_CooperativeMatrixLayoutRowMajor);
}
