//===- GptTest.cpp - the GPT-like example model ---------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Models/Gpt.h"

#include "hetero/Dialect/Hetero.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"

#include "gtest/gtest.h"

#include <map>
#include <numeric>
#include <set>

using namespace hetero::models;
using namespace mlir;

namespace {

TEST(GptPartition, SpreadsTheRemainderOverTheFirstStages) {
  StagePartition partition = partitionLayers(10, 4);
  EXPECT_EQ(partition.count, (std::vector<int64_t>{3, 3, 2, 2}));
  EXPECT_EQ(partition.first, (std::vector<int64_t>{0, 3, 6, 8}));
}

TEST(GptPartition, CoversEveryLayerOnce) {
  for (int64_t layers = 1; layers <= 96; layers += 5)
    for (int64_t stages = 1; stages <= layers && stages <= 16; ++stages) {
      StagePartition partition = partitionLayers(layers, stages);
      int64_t total = std::accumulate(partition.count.begin(),
                                      partition.count.end(), int64_t{0});
      EXPECT_EQ(total, layers);
      for (int64_t s = 1; s < stages; ++s)
        EXPECT_EQ(partition.first[s],
                  partition.first[s - 1] + partition.count[s - 1]);
    }
}

TEST(GptValidate, AcceptsTheDefaults) {
  EXPECT_TRUE(validate(GptConfig{}).empty());
}

TEST(GptValidate, NamesEachProblem) {
  GptConfig config;
  config.hidden = 30;
  config.heads = 4;
  config.stages = 3;
  config.layers = 2;
  config.optimizer = "lamb";
  std::vector<std::string> problems = validate(config);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("--optimizer must be sgd or adam; got 'lamb'"),
            std::string::npos);
  config.optimizer = "adam";
  problems = validate(config);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find("--stages (3) must not exceed --layers (2)"),
            std::string::npos);
  EXPECT_NE(problems[1].find("--hidden (30) must be divisible by --heads (4)"),
            std::string::npos);
}

TEST(GptBuild, IsAnExecutablePipelineInTheStageAbi) {
  GptConfig config;
  config.layers = 5;
  config.stages = 3;
  config.dataParallel = 2;
  MLIRContext context;
  OwningOpRef<ModuleOp> module = buildGpt(&context, config);
  ASSERT_TRUE(succeeded(verify(*module)));
  auto pipeline = module->lookupSymbol<hetero::PipelineOp>("gpt");
  ASSERT_TRUE(pipeline);
  EXPECT_TRUE(pipeline.isExecutable());
  auto grid = module->lookupSymbol<shard::GridOp>("gpt_devices");
  EXPECT_EQ(grid.getShape(), ArrayRef<int64_t>({3, 2}));
  for (int64_t s = 0; s < 3; ++s) {
    hetero::StageOp stage = pipeline.getStage(s);
    std::vector<Parameter> expected = stageParameters(config, s);
    ASSERT_EQ(stage.getParamSymbols().size(), expected.size());
    for (auto [symbol, param] : llvm::zip(stage.getParamSymbols(), expected)) {
      EXPECT_EQ(symbol.getValue(), param.name);
      auto global = module->lookupSymbol<memref::GlobalOp>(param.name);
      ASSERT_TRUE(global);
      EXPECT_EQ(global.getType().getShape(), ArrayRef<int64_t>(param.shape));
    }
  }
  // The embeddings on the first stage, the vocabulary projection last.
  EXPECT_EQ(stageParameters(config, 0).front().name, "wte");
  EXPECT_EQ(stageParameters(config, 0).front().shape,
            std::vector<int64_t>({config.vocab, config.hidden}));
  EXPECT_EQ(stageParameters(config, 2).back().name, "head");
  EXPECT_EQ(stageParameters(config, 2).back().shape,
            std::vector<int64_t>({config.hidden, config.vocab}));
  // 8 parameters per layer, 2 embeddings, final norm and head.
  size_t total = 0;
  for (int64_t s = 0; s < 3; ++s)
    total += stageParameters(config, s).size();
  EXPECT_EQ(total, 5u * 8u + 2u + 3u);
  // The data come from the runtime's corpus, as token ids.
  int64_t batches = 0;
  module->walk([&](hetero::CorpusBatchOp batch) {
    ++batches;
    EXPECT_EQ(batch.getVocab(), config.vocab);
    EXPECT_EQ(batch.getReplicas(), 2);
  });
  EXPECT_EQ(batches, 1);
  EXPECT_TRUE(module->lookupSymbol<func::FuncOp>("gpt_generate"));
  // The model is forward-only: no stage has a backward: hetero-derive-backward
  // derives them.
  for (hetero::StageOp stage : pipeline.getBody().getOps<hetero::StageOp>()) {
    EXPECT_FALSE(stage.getBackwardAttr());
    EXPECT_FALSE(stage.getBackwardInputAttr());
  }
  // Every layer calls the shared block function: @gpt_block_forward has a
  // block's four prunable linears, forward products only. Run per layer,
  // each linear appears once in the forward function, and the last stage's
  // layers (1 of 5) once more in its logits function. Nothing communicates.
  llvm::StringMap<int64_t> prunablePerFunction;
  std::map<std::string, int64_t> productsPerLayer;
  int64_t communication = 0;
  module->walk([&](Operation *op) {
    if (auto matmul = dyn_cast<hetero::PrunableMatmulOp>(op)) {
      auto function = op->getParentOfType<func::FuncOp>();
      ++prunablePerFunction[function.getSymName()];
      // Each block's linears have plans of their own: the block index is
      // the block function's first argument.
      EXPECT_EQ(matmul.getBlock(), function.getArgument(0));
      EXPECT_EQ(matmul.getProduct(), hetero::MatmulProduct::forward);
      ++productsPerLayer[matmul.getLayer().str()];
    }
    communication += isa<hetero::AllReduceOp, hetero::BucketOp, hetero::SendOp,
                         hetero::CheckpointOp>(op);
  });
  EXPECT_EQ(prunablePerFunction.size(), 1u);
  EXPECT_EQ(prunablePerFunction.lookup("gpt_block_forward"), 4);
  EXPECT_EQ(productsPerLayer.size(), 4u);
  for (const auto &[layer, products] : productsPerLayer)
    EXPECT_EQ(products, 1) << layer;
  int64_t matmuls = 0;
  module->walk([&](func::CallOp call) {
    matmuls += prunablePerFunction.lookup(call.getCallee());
  });
  EXPECT_EQ(matmuls, 5 * 4 + 1 * 4);
  EXPECT_EQ(communication, 0);
  // The forward calls pass the layers' indices 0..4 as block indices.
  std::set<int64_t> blocks;
  module->walk([&](func::CallOp call) {
    if (call.getCallee() == "gpt_block_forward")
      if (std::optional<int64_t> block =
              getConstantIntValue(call.getOperand(0)))
        blocks.insert(*block);
  });
  EXPECT_EQ(blocks, (std::set<int64_t>{0, 1, 2, 3, 4}));
}

} // namespace
