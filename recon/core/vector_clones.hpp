// Wider vectors where the processor has them: GCC compiles a function marked RECON_VECTOR_CLONES
// once per instruction set and picks one at load time (an ifunc). Elsewhere (Clang, whose
// target_clones needs the attribute on every declaration, and processors other than x86-64)
// the one default build.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define RECON_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define RECON_VECTOR_CLONES
#endif
