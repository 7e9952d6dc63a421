/**
 * The CUDA release tscuda is built and tested against, in one place: codegen stamps it on the
 * header snapshots, the library search (libraries.ts) and the NVRTC include search
 * (runtime/cuda-include.ts) look in its pip wheel folder and for its sonames first, and the
 * driver check (Device.available) names its minimum driver. Moving to a new CUDA release starts
 * here (CONTRIBUTING.md lists every other file it touches).
 */

/** The CUDA toolkit whose headers the bindings are generated from ('major.minor'). */
export const CUDA_TOOLKIT_VERSION = '13.0';
/** Its major version: the soname of libcudart and libnvrtc (`libcudart.so.13`). */
export const CUDA_MAJOR = 13;
/** The previous major, still found by the library search (one folder per library in its wheels). */
export const CUDA_PREVIOUS_MAJOR = 12;
/** cuFFT's soname major in this toolkit (`libcufft.so.12`), and in the previous one. */
export const CUFFT_MAJOR = 12;
/** cuFFT's soname major in the previous toolkit. */
export const CUFFT_PREVIOUS_MAJOR = 11;
/** The oldest NVIDIA driver branch that runs this CUDA release. */
export const MINIMUM_DRIVER = 580;
/** The version `cuDriverGetVersion` reports for this release (1000 x major + 10 x minor). */
export const CUDA_DRIVER_API_VERSION = 13000;
/** The pip wheels' suffix for this release (`nvidia-cufft-cu13`) and their shared folder under site-packages. */
export const PIP_SUFFIX = `cu${CUDA_MAJOR}`;
/** Where this release's pip wheels put every library and header: `site-packages/nvidia/cu13/{lib,include}`. */
export const PIP_WHEEL_FOLDER = `nvidia/${PIP_SUFFIX}`;
/** The previous release's shared wheel folder, still searched (`nvidia/cu12`). */
export const PIP_PREVIOUS_WHEEL_FOLDER = `nvidia/cu${CUDA_PREVIOUS_MAJOR}`;
