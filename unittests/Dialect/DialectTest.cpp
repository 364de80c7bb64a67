//===- DialectTest.cpp - building and verifying hetero IR from C++ --------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Dialect/Hetero.h"
#include "hetero/InitAll.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include "gtest/gtest.h"

using namespace mlir;

namespace {

class HeteroDialectTest : public ::testing::Test {
protected:
  HeteroDialectTest() { hetero::registerAndLoadAllDialects(context); }

  /// Verifies `module` and returns the diagnostics it produced.
  std::string verifyAndCollect(ModuleOp module) {
    std::string messages;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
      messages += diagnostic.str() + "\n";
      return success();
    });
    (void)verify(module);
    return messages;
  }

  MLIRContext context;
  OpBuilder builder{&context};
  Location loc = builder.getUnknownLoc();
};

TEST_F(HeteroDialectTest, CompressAttrKnowsWhichCompressorsAreLinear) {
  auto make = [&](hetero::Compressor compressor) {
    return hetero::CompressAttr::get(
        &context, compressor, llvm::APFloat(1.0), 256, false,
        hetero::Placement::gpu, hetero::CollectiveScheme::allgather, 1);
  };
  EXPECT_TRUE(make(hetero::Compressor::none).isLinear());
  EXPECT_TRUE(make(hetero::Compressor::fp16).isLinear());
  EXPECT_TRUE(make(hetero::Compressor::bf16).isLinear());
  EXPECT_FALSE(make(hetero::Compressor::topk).isLinear());
  EXPECT_FALSE(make(hetero::Compressor::onebit).isLinear());
  EXPECT_FALSE(make(hetero::Compressor::qsgd).isLinear());
}

TEST_F(HeteroDialectTest, BuildsAndVerifiesACheckpoint) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  auto type = RankedTensorType::get({8}, builder.getF32Type());
  auto function = func::FuncOp::create(builder, loc, "step",
                                       builder.getFunctionType({type}, {}));
  Block *body = function.addEntryBlock();
  builder.setInsertionPointToEnd(body);
  hetero::CheckpointOp::create(builder, loc, body->getArguments(),
                               /*replicas=*/2, /*world=*/4,
                               hetero::ReplicaPlacement::group,
                               /*every=*/1);
  func::ReturnOp::create(builder, loc);
  EXPECT_EQ(verifyAndCollect(*module), "");

  // Too many replicas for the world is reported, not asserted.
  builder.setInsertionPoint(body->getTerminator());
  hetero::CheckpointOp::create(builder, loc, body->getArguments(),
                               /*replicas=*/5, /*world=*/4,
                               hetero::ReplicaPlacement::ring,
                               /*every=*/1);
  EXPECT_NE(verifyAndCollect(*module).find(
                "asks for 5 replicas, but the world has only 4 machines"),
            std::string::npos);
}

TEST_F(HeteroDialectTest, BucketInfersItsResultTypes) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  auto a = RankedTensorType::get({8}, builder.getF32Type());
  auto b = RankedTensorType::get({2, 3}, builder.getF32Type());
  auto function = func::FuncOp::create(builder, loc, "step",
                                       builder.getFunctionType({a, b}, {}));
  Block *body = function.addEntryBlock();
  builder.setInsertionPointToEnd(body);
  auto bucket = hetero::BucketOp::create(
      builder, loc, /*grid=*/FlatSymbolRefAttr(),
      /*grid_axes=*/ArrayRef<int16_t>(), body->getArguments(),
      hetero::Reduction::avg, /*compress=*/hetero::CompressAttr());
  func::ReturnOp::create(builder, loc);
  ASSERT_EQ(bucket.getNumResults(), 2u);
  EXPECT_EQ(bucket.getResult(0).getType(), a);
  EXPECT_EQ(bucket.getResult(1).getType(), b);
  EXPECT_EQ(verifyAndCollect(*module), "");
}

} // namespace
