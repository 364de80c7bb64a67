//===- consumer.cpp - an external tool that embeds hetero -----------------===//

#include "hetero/Dialect/Hetero.h"
#include "hetero/InitAll.h"
#include "hetero/Passes/HeteroToRuntime.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/Support/raw_ostream.h"

int main() {
  mlir::DialectRegistry registry;
  hetero::registerAllDialects(registry);
  hetero::registerAllPasses();
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  const char *source = R"mlir(
    func.func @sync(%g: tensor<8xf32>) -> tensor<8xf32> {
      %0 = hetero.all_reduce %g reduction = avg : tensor<8xf32>
      return %0 : tensor<8xf32>
    })mlir";
  auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module)
    return 1;
  int collectives = 0;
  module->walk([&](hetero::AllReduceOp) { ++collectives; });
  llvm::outs() << "consumer: " << collectives << " hetero.all_reduce\n";
  if (collectives != 1)
    return 1;
  // hetero's runtime patterns inside a conversion of the consumer's own.
  auto own = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  mlir::ConversionTarget target(context);
  hetero::configureHeteroToRuntimeTarget(target);
  mlir::RewritePatternSet patterns(&context);
  hetero::populateHeteroToRuntimeConversionPatterns(
      patterns, {/*blockingCollectives=*/true});
  if (!own || mlir::failed(mlir::applyPartialConversion(*own, target,
                                                       std::move(patterns))))
    return 1;
  llvm::outs() << "consumer: own conversion calls";
  own->walk([&](mlir::func::CallOp call) {
    llvm::outs() << " " << call.getCallee();
  });
  llvm::outs() << "\n";
  // hetero's CPU pipeline by its registered name; no upstream pass is
  // registered in this program.
  mlir::PassManager pm(&context);
  if (mlir::failed(mlir::parsePassPipeline("hetero-lower-to-cpu", pm)) ||
      mlir::failed(pm.run(*module)))
    return 1;
  int remaining = 0;
  module->walk([&](mlir::Operation *op) {
    remaining += op->getDialect() &&
                 op->getDialect()->getNamespace() != "llvm" &&
                 op->getDialect()->getNamespace() != "builtin";
  });
  llvm::outs() << "consumer: lowered to the LLVM dialect, " << remaining
               << " other ops\n";
  return remaining == 0 ? 0 : 1;
}
