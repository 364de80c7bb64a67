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
#include "mlir/Parser/Parser.h"

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
    return hetero::CompressAttr::get(&context, compressor, llvm::APFloat(1.0),
                                     256, false, hetero::Placement::gpu,
                                     hetero::CollectiveScheme::allgather, 1);
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
  auto function = func::FuncOp::create(
      builder, loc, "step",
      builder.getFunctionType({type, builder.getI64Type()}, {}));
  Block *body = function.addEntryBlock();
  builder.setInsertionPointToEnd(body);
  Value tensor = body->getArgument(0), step = body->getArgument(1);
  hetero::CheckpointOp::create(builder, loc, ValueRange{tensor}, step,
                               /*replicas=*/2, /*world=*/4,
                               hetero::ReplicaPlacement::group,
                               /*every=*/1);
  func::ReturnOp::create(builder, loc);
  EXPECT_EQ(verifyAndCollect(*module), "");

  // Too many replicas for the world is reported, not asserted.
  builder.setInsertionPoint(body->getTerminator());
  hetero::CheckpointOp::create(builder, loc, ValueRange{tensor}, step,
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

TEST_F(HeteroDialectTest, CollectivesAnswerThroughTheirInterface) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    shard.grid @grid(shape = 2x4)
    shard.grid @dynamic(shape = 2x?)
    func.func @step(%g: tensor<8xf32>, %h: tensor<4xf32>) {
      %0 = hetero.all_reduce %g on @grid axes = [1] reduction = avg
          compress <topk, ratio = 0.1, scheme = allgather> : tensor<8xf32>
      %1 = hetero.all_gather %h on @grid axes = [0] axis = 0
          : tensor<4xf32> -> tensor<8xf32>
      %2 = hetero.all_reduce %g on @dynamic axes = [1] : tensor<8xf32>
      %3 = hetero.broadcast %g root = 0 : tensor<8xf32>
      %4:2 = hetero.bucket %g, %h on @grid reduction = max
          compress <none> : tensor<8xf32>, tensor<4xf32>
      return
    }
  )mlir",
                                                             &context);
  ASSERT_TRUE(module);
  SmallVector<hetero::CollectiveOpInterface> ops;
  module->walk([&](hetero::CollectiveOpInterface op) { ops.push_back(op); });
  ASSERT_EQ(ops.size(), 5u);

  EXPECT_EQ(ops[0].getStaticGroupSize(), 4);
  EXPECT_EQ(ops[0].getReductionKind(), hetero::Reduction::avg);
  EXPECT_TRUE(ops[0].isCompressed());
  EXPECT_EQ(ops[0].getCompression().getCompressor(), hetero::Compressor::topk);

  EXPECT_EQ(ops[1].getStaticGroupSize(), 2);
  EXPECT_EQ(ops[1].getReductionKind(), std::nullopt);
  EXPECT_FALSE(ops[1].getCompression());

  // A dynamic extent and the world have no static size.
  EXPECT_EQ(ops[2].getStaticGroupSize(), std::nullopt);
  EXPECT_EQ(ops[3].getStaticGroupSize(), std::nullopt);
  EXPECT_FALSE(ops[3].getGrid());

  // Empty axes span the whole grid; `none` is not a compression.
  EXPECT_EQ(ops[4].getStaticGroupSize(), 8);
  EXPECT_EQ(ops[4].getReductionKind(), hetero::Reduction::max);
  EXPECT_TRUE(ops[4].getCompression());
  EXPECT_FALSE(ops[4].isCompressed());
  ops[4].setCompression({});
  EXPECT_FALSE(ops[4].getCompression());
}

TEST_F(HeteroDialectTest, TasksAreActionsOfTheScheduleLibrary) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      R"mlir(
    module {
      hetero.schedule @s for @p group_size = 1 {
        hetero.stage_program 1 {
          hetero.recv_task activation 3 from 0
          hetero.fwd 3
          hetero.bwd 3
          hetero.send_task gradient 3 to 0
        }
      }
    }
  )mlir",
      ParserConfig(&context, /*verifyAfterParse=*/false));
  ASSERT_TRUE(module);
  std::vector<hetero::schedule::Action> actions;
  module->walk([&](hetero::TaskOpInterface task) {
    EXPECT_EQ(task.getMicrobatch(), 3);
    actions.push_back(task.getAction());
  });
  using hetero::schedule::Action;
  ASSERT_EQ(actions.size(), 4u);
  EXPECT_EQ(actions[0].kind, Action::RecvActivation);
  EXPECT_EQ(actions[0].peer, 0);
  EXPECT_EQ(actions[1].kind, Action::Forward);
  EXPECT_EQ(actions[2].kind, Action::Backward);
  EXPECT_EQ(actions[3].kind, Action::SendGradient);
  EXPECT_EQ(actions[3].peer, 0);
}

} // namespace
