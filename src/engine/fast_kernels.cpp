// engine/fast_kernels.cpp — see fast_kernels.h. The kernel bodies (fast_kernels.inc) are compiled
// three times here, each inside a region that sets the instruction set for every function in it
// (GCC's target pragma, Clang's attribute pragma): unlike target_clones, this also covers the small
// helper functions, whose vector code would otherwise be lowered for the baseline before inlining.
#include "engine/fast_kernels.h"

#include <vector>

#include "engine/ops.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#if defined(__x86_64__)

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx512cd,avx2,fma,bmi,bmi2,popcnt"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v4")
#endif
#define RVFORMER_KERNEL_NAMESPACE x86_64_v4
#define RVFORMER_KERNEL_AVX512
#include "engine/fast_kernels.inc"
#undef RVFORMER_KERNEL_AVX512
#undef RVFORMER_KERNEL_NAMESPACE
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,bmi,bmi2,popcnt"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v3")
#endif
#define RVFORMER_KERNEL_NAMESPACE x86_64_v3
#define RVFORMER_KERNEL_AVX2
#include "engine/fast_kernels.inc"
#undef RVFORMER_KERNEL_AVX2
#undef RVFORMER_KERNEL_NAMESPACE
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif  // __x86_64__

#define RVFORMER_KERNEL_NAMESPACE baseline
#include "engine/fast_kernels.inc"
#undef RVFORMER_KERNEL_NAMESPACE

namespace rvformer::engine {

namespace {

#if defined(__x86_64__)
// The features each region above compiles for.
bool cpu_runs_x86_64_v4() {
#if defined(__clang__)
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
#else
  return __builtin_cpu_supports("x86-64-v4");
#endif
}

#endif

std::vector<KernelVariant> list_variants() {
  std::vector<KernelVariant> variants;
#if defined(__x86_64__)
  variants.push_back({"x86-64-v4 (AVX-512)", &x86_64_v4::kernels, cpu_runs_x86_64_v4()});
  variants.push_back({"x86-64-v3 (AVX2)", &x86_64_v3::kernels, cpu_runs_x86_64_v3()});
#endif
  variants.push_back({"baseline", &baseline::kernels, true});
  return variants;
}

}  // namespace

#if defined(__x86_64__)
bool cpu_runs_x86_64_v3() {
#if defined(__clang__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
         __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
#else
  return __builtin_cpu_supports("x86-64-v3");
#endif
}
#endif

std::span<const KernelVariant> kernel_variants() {
  static const std::vector<KernelVariant> variants = list_variants();
  return variants;
}

const FastKernels& fast_kernels() {
  static const FastKernels& chosen = [] () -> const FastKernels& {
    for (const KernelVariant& variant : kernel_variants()) {
      if (variant.supported) return *variant.kernels;
    }
    return baseline::kernels;
  }();
  return chosen;
}

}  // namespace rvformer::engine
