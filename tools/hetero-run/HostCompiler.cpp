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

llvm::Expected<hetero::HostCompiler>
hetero::makeHostCompiler(unsigned optLevel) {
  if (optLevel > 3)
    return createStringError("optimisation level -O%u is not one of 0 to 3",
                             optLevel);
  static const OptimizationLevel kLevels[] = {
      OptimizationLevel::O0, OptimizationLevel::O1, OptimizationLevel::O2,
      OptimizationLevel::O3};
  OptimizationLevel level = kLevels[optLevel];
  Expected<orc::JITTargetMachineBuilder> builder =
      orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  CodeGenOptLevel codeGenLevel = *CodeGenOpt::getLevel(int(optLevel));
  builder->setCodeGenOptLevel(codeGenLevel);
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
  compiler.codeGenLevel = codeGenLevel;
  compiler.optimize = [target, vectorMath, level](Module *module) -> Error {
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
        level == OptimizationLevel::O0
            ? passes.buildO0DefaultPipeline(level)
            : passes.buildPerModuleDefaultPipeline(level);
    pipeline.run(*module, modules);
    return Error::success();
  };
  return compiler;
}
