//===- ScheduledModule.cpp - the schedules of an MLIR module --------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "ScheduledModule.h"

#include "hetero/Dialect/Schedule.h"
#include "hetero/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace hetero {

bool readScheduledModule(const std::string &path,
                         std::vector<NamedSchedule> &schedules) {
  MLIRContext context;
  registerAndLoadAllDialects(context);
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(path, &message);
  if (!file) {
    llvm::errs() << "hetero-sim: " << message << "\n";
    return false;
  }
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sources, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, &context);
  if (!module)
    return false;
  SymbolTable symbols(*module);
  bool sound = true;
  for (auto scheduleOp : module->getOps<ScheduleOp>()) {
    // The op verifier has resolved the pipeline and the stage ids.
    auto pipeline = symbols.lookup<PipelineOp>(scheduleOp.getPipeline());
    StagePrograms programs = getStagePrograms(scheduleOp, pipeline);
    if (failed(verifyStagePrograms(scheduleOp, pipeline, programs))) {
      sound = false;
      continue;
    }
    schedules.push_back({scheduleOp.getSymName().str(),
                         std::move(programs.actions),
                         int64_t(scheduleOp.getMicrobatchSize().value_or(0)),
                         programs.placement});
  }
  if (sound && schedules.empty()) {
    llvm::errs() << "hetero-sim: " << path
                 << " has no hetero.schedule; schedule it first (hetero-opt "
                    "--hetero-kfkb-schedule or --hetero-import-schedule)\n";
    return false;
  }
  return sound;
}

} // namespace hetero
