//===- GptTest.cpp - the GPT-like example model ---------------------------===//
//
// Part of the hetero project.
//
//===----------------------------------------------------------------------===//

#include "hetero/Models/Gpt.h"

#include "gtest/gtest.h"

#include <numeric>

using namespace hetero::models;

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
  config.compressor = "zip";
  std::vector<std::string> problems = validate(config);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_NE(problems[0].find("--stages (3) must not exceed --layers (2)"),
            std::string::npos);
  EXPECT_NE(problems[1].find("--hidden (30) must be divisible by --heads (4)"),
            std::string::npos);
  EXPECT_NE(problems[2].find("--compress must be one of"), std::string::npos);
}

TEST(GptEmit, HasOneStageOpAndTwoFunctionsPerStage) {
  GptConfig config;
  config.layers = 5;
  config.stages = 3;
  std::string text = emitGpt(config);
  for (int s = 0; s < 3; ++s) {
    std::string id = std::to_string(s);
    EXPECT_NE(text.find("hetero.stage " + id + " forward @gpt_stage" + id +
                        "_forward backward @gpt_stage" + id + "_backward"),
              std::string::npos);
    EXPECT_NE(text.find("func.func @gpt_stage" + id + "_forward("),
              std::string::npos);
    EXPECT_NE(text.find("func.func @gpt_stage" + id + "_backward("),
              std::string::npos);
  }
  // Four prunable linears per layer, each appearing three times: in the
  // forward function, in the backward's recomputation, and as the activation
  // gradient in the backward.
  size_t matmuls = 0;
  for (size_t at = text.find("hetero.prunable_matmul");
       at != std::string::npos;
       at = text.find("hetero.prunable_matmul", at + 1))
    ++matmuls;
  EXPECT_EQ(matmuls, 5u * 4u * 3u);
}

} // namespace
