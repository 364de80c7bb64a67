//===- consumer.cpp - an external tool that embeds hetero -----------------===//

#include "hetero/Dialect/Hetero.h"
#include "hetero/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
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
  return collectives == 1 ? 0 : 1;
}
