//===- HostCompiler.cpp - compiling a lowered step for this host ----------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "HostCompiler.h"

#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"

using namespace llvm;

llvm::Expected<hetero::HostCompiler> hetero::makeHostCompiler() {
  Expected<orc::JITTargetMachineBuilder> builder =
      orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  builder->setCodeGenOptLevel(CodeGenOptLevel::Aggressive);
  Expected<std::unique_ptr<TargetMachine>> machine =
      builder->createTargetMachine();
  if (!machine)
    return machine.takeError();
  HostCompiler compiler;
  compiler.targetMachine = std::move(*machine);
  // glibc's vector math (x86-64 with SSE4 or AVX2 variants), when the build
  // found it; the JIT loads the library for the calls it makes.
  bool vectorMath = false;
#ifdef HETERO_LIBMVEC
  if (compiler.targetMachine->getTargetTriple().getArch() == Triple::x86_64) {
    vectorMath = true;
    compiler.libraries.push_back(HETERO_LIBMVEC);
  }
#endif
  TargetMachine *target = compiler.targetMachine.get();
  compiler.optimize = [target, vectorMath](Module *module) -> Error {
    LoopAnalysisManager loops;
    FunctionAnalysisManager functions;
    CGSCCAnalysisManager sccs;
    ModuleAnalysisManager modules;
    PipelineTuningOptions tuning;
    tuning.LoopVectorization = true;
    tuning.SLPVectorization = true;
    tuning.LoopUnrolling = true;
    PassBuilder passes(target, tuning);
    TargetLibraryInfoImpl library(module->getTargetTriple());
    if (vectorMath)
      library.addVectorizableFunctionsFromVecLib(VectorLibrary::LIBMVEC,
                                                 module->getTargetTriple());
    functions.registerPass([&] { return TargetLibraryAnalysis(library); });
    passes.registerModuleAnalyses(modules);
    passes.registerCGSCCAnalyses(sccs);
    passes.registerFunctionAnalyses(functions);
    passes.registerLoopAnalyses(loops);
    passes.crossRegisterProxies(loops, functions, sccs, modules);
    ModulePassManager pipeline =
        passes.buildPerModuleDefaultPipeline(OptimizationLevel::O3);
    pipeline.run(*module, modules);
    return Error::success();
  };
  return compiler;
}
