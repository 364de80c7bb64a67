//===- Device.h - hetero-run's GPU side -------------------------*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// With --device gpu, hetero-run compiles the program with
// hetero-lower-to-gpu and runs it with libhetero_rt_cuda, which keeps the
// program's globals (parameters, optimizer state) in device memory. The
// host reads and writes them for --load and --save: this moves them
// between the two.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_TOOLS_HETERO_RUN_DEVICE_H
#define HETERO_TOOLS_HETERO_RUN_DEVICE_H

#include <cstdint>
#include <string>

namespace hetero {

class DeviceMemory {
public:
  /// Whether this build of hetero-run can run programs on a GPU.
  static bool available();

  /// libhetero_rt_cuda, beside hetero-run's own libraries; "" when this
  /// build has none.
  static std::string library();

  /// Loads libhetero_rt_cuda into the process (where the compiled program
  /// finds it) and finds its copy entry points; false after a message.
  bool bind();

  /// The device copies of the globals to their host buffers, and back. No
  /// effect before bind().
  void toHost() const;
  void toDevice() const;

  /// Frees the device copies and the memory libhetero_rt_cuda keeps for
  /// reuse, once the program is done with them (their values are lost).
  /// No effect before bind().
  void release() const;

  /// Copies one global's device copy to its host buffer (`toDevice` 0) or
  /// back; a global without one is left alone. Null before bind(): the
  /// shape of hrt_ckpt_options::copy_state.
  static void (*stateCopy())(void *host, long long bytes, int toDevice);

private:
  void (*mirrorsToHost)() = nullptr;
  void (*mirrorsToDevice)() = nullptr;
  int64_t (*releaseAll)() = nullptr;
};

} // namespace hetero

#endif // HETERO_TOOLS_HETERO_RUN_DEVICE_H
