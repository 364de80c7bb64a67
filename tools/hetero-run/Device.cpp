//===- Device.cpp - hetero-run's GPU side ---------------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

using namespace hetero;

namespace {
/// libhetero_rt_cuda's hrt_cuda_mirror_copy, once bound.
void (*mirrorCopy)(void *host, int64_t bytes, int toDevice) = nullptr;

void copyGlobal(void *host, long long bytes, int toDevice) {
  mirrorCopy(host, int64_t(bytes), toDevice);
}
} // namespace

bool DeviceMemory::available() {
#ifdef HETERO_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

std::string DeviceMemory::library() {
  if (!available())
    return "";
  // bin/hetero-run and lib/libhetero_rt_cuda.so, in the build tree as in
  // an installation.
  llvm::SmallString<256> path(llvm::sys::fs::getMainExecutable(
      nullptr, reinterpret_cast<void *>(&DeviceMemory::available)));
  llvm::sys::path::remove_filename(path);
  llvm::sys::path::remove_filename(path);
  llvm::sys::path::append(path, "lib", "libhetero_rt_cuda.so");
  return std::string(path);
}

bool DeviceMemory::bind() {
  std::string path = library(), error;
  if (!llvm::sys::DynamicLibrary::getPermanentLibrary(path.c_str(), &error)
           .isValid()) {
    llvm::errs() << "hetero-run: --device gpu: cannot load " << path << ": "
                 << error << " (a GPU run needs the CUDA driver)\n";
    return false;
  }
  mirrorsToHost = reinterpret_cast<void (*)()>(
      llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(
          "hrt_cuda_mirrors_to_host"));
  mirrorsToDevice = reinterpret_cast<void (*)()>(
      llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(
          "hrt_cuda_mirrors_to_device"));
  mirrorCopy = reinterpret_cast<void (*)(void *, int64_t, int)>(
      llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(
          "hrt_cuda_mirror_copy"));
  releaseAll = reinterpret_cast<int64_t (*)()>(
      llvm::sys::DynamicLibrary::SearchForAddressOfSymbol("hrt_cuda_release"));
  if (mirrorsToHost && mirrorsToDevice && mirrorCopy && releaseAll)
    return true;
  llvm::errs() << "hetero-run: --device gpu: " << path
               << " lacks hrt_cuda_mirrors_to_host, "
                  "hrt_cuda_mirrors_to_device, hrt_cuda_mirror_copy or "
                  "hrt_cuda_release\n";
  return false;
}

void (*DeviceMemory::stateCopy())(void *, long long, int) {
  return mirrorCopy ? &copyGlobal : nullptr;
}

void DeviceMemory::toHost() const {
  if (mirrorsToHost)
    mirrorsToHost();
}

void DeviceMemory::toDevice() const {
  if (mirrorsToDevice)
    mirrorsToDevice();
}

void DeviceMemory::release() const {
  if (releaseAll)
    releaseAll();
}
