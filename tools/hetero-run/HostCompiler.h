//===- HostCompiler.h - compiling a lowered step for this host --*- C++ -*-===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//
//
// hetero-run compiles the LLVM-dialect step for the CPU it runs on: the
// host's target machine with its vector extensions (the loop vectoriser
// needs the target's registers to vectorise at all), LLVM's O3 pipeline
// (or a lower level, -O0 to -O2, which compiles faster), and glibc's
// vector math library (libmvec), so that loops over exponentials and
// logarithms (softmax, GELU, the loss) vectorise too.
//
//===----------------------------------------------------------------------===//

#ifndef HETERO_RUN_HOSTCOMPILER_H
#define HETERO_RUN_HOSTCOMPILER_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <functional>
#include <memory>

namespace hetero {

struct HostCompiler {
  /// The host's target machine, at the code generation level of the
  /// optimisation level (Aggressive at 3).
  std::unique_ptr<llvm::TargetMachine> targetMachine;
  /// That code generation level, for the JIT's own.
  llvm::CodeGenOptLevel codeGenLevel = llvm::CodeGenOptLevel::Aggressive;
  /// LLVM's pipeline of the optimisation level for that target, with
  /// libmvec's vector functions where the host has them.
  std::function<llvm::Error(llvm::Module *)> optimize;
  /// Libraries the compiled code calls (libmvec), for the JIT to load.
  llvm::SmallVector<llvm::StringRef> libraries;
};

/// The compiler for this host at optimisation level `optLevel` (0 to 3),
/// or the reason there is none.
llvm::Expected<HostCompiler> makeHostCompiler(unsigned optLevel = 3);

} // namespace hetero

#endif // HETERO_RUN_HOSTCOMPILER_H
