// RUN: hetero-opt %s -split-input-file -verify-diagnostics

func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
// expected-error @+1 {{expected a placement: loop, v, or a list of one rank per stage such as [0, 1, 1, 0]}}
hetero.pipeline @p stages = 2 microbatches = 2 placement = zigzag {
  hetero.stage 0 forward @id backward @id
  hetero.stage 1 forward @id backward @id
}

// -----

func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
// expected-error @+1 {{'hetero.pipeline' op has placement 'zigzag', expected loop, v, or a list of one rank per stage}}
hetero.pipeline @p stages = 2 microbatches = 2 attributes {placement = "zigzag"} {
  hetero.stage 0 forward @id backward @id
  hetero.stage 1 forward @id backward @id
}

// -----

func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
// expected-error @+1 {{'hetero.pipeline' op places its stages in a loop over the ranks of its grid, but names no grid}}
hetero.pipeline @p stages = 2 microbatches = 2 placement = loop {
  hetero.stage 0 forward @id backward @id
  hetero.stage 1 forward @id backward @id
}

// -----

func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
shard.grid @grid(shape = 2)
// expected-error @+1 {{'hetero.pipeline' op places its 3 stages in a V over 2 ranks; a V needs twice as many stages as ranks}}
hetero.pipeline @p stages = 3 microbatches = 2 placement = v on @grid {
  hetero.stage 0 forward @id backward @id
  hetero.stage 1 forward @id backward @id
  hetero.stage 2 forward @id backward @id
}

// -----

func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
shard.grid @grid(shape = 4)
// expected-error @+1 {{'hetero.pipeline' op places its 2 stages in a loop over 4 ranks, which leaves ranks without a stage}}
hetero.pipeline @p stages = 2 microbatches = 2 placement = loop on @grid {
  hetero.stage 0 forward @id backward @id
  hetero.stage 1 forward @id backward @id
}

// -----

func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
// expected-error @+1 {{'hetero.pipeline' op places 3 stages, but has 2; the list names one rank per stage}}
hetero.pipeline @p stages = 2 microbatches = 2 placement = [0, 1, 0] {
  hetero.stage 0 forward @id backward @id
  hetero.stage 1 forward @id backward @id
}

// -----

func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
shard.grid @grid(shape = 2)
// expected-error @+1 {{'hetero.pipeline' op places stage 1 on rank 2, outside ranks 0..1}}
hetero.pipeline @p stages = 2 microbatches = 2 placement = [0, 2] on @grid {
  hetero.stage 0 forward @id backward @id
  hetero.stage 1 forward @id backward @id
}

// -----

func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
// expected-error @+1 {{'hetero.pipeline' op places no stage on rank 1 of 3}}
hetero.pipeline @p stages = 2 microbatches = 2 placement = [0, 2] {
  hetero.stage 0 forward @id backward @id
  hetero.stage 1 forward @id backward @id
}

// -----

func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 3 microbatches = 1 placement = [0, 1, 0] {
  hetero.stage 0 forward @id backward @id
  hetero.stage 1 forward @id backward @id
  hetero.stage 2 forward @id backward @id
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    // expected-error @+1 {{'hetero.fwd' op names no stage, but rank 0 holds stages [0, 2]; name one with `stage <s>`}}
    hetero.fwd 0
  }
  hetero.stage_program 1 {
  }
}

// -----

func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 3 microbatches = 1 placement = [0, 1, 0] {
  hetero.stage 0 forward @id backward @id
  hetero.stage 1 forward @id backward @id
  hetero.stage 2 forward @id backward @id
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    // expected-error @+1 {{'hetero.fwd' op runs stage 1 in the program of rank 0, but the pipeline places stage 1 on rank 1}}
    hetero.fwd 0 stage 1
  }
  hetero.stage_program 1 {
  }
}

// -----

func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 3 microbatches = 1 placement = [0, 0, 1] {
  hetero.stage 0 forward @id backward @id
  hetero.stage 1 forward @id backward @id
  hetero.stage 2 forward @id backward @id
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    hetero.fwd 0 stage 0
    // expected-error @+1 {{'hetero.send_task' op transfers between stages 0 and 1, which are both on rank 0; neighbouring stages on one rank need no transfer}}
    hetero.send_task activation 0 to 1 stage 0
  }
  hetero.stage_program 1 {
  }
}

// -----

func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 3 microbatches = 1 placement = [0, 1, 0] {
  hetero.stage 0 forward @id backward @id
  hetero.stage 1 forward @id backward @id
  hetero.stage 2 forward @id backward @id
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    // expected-error @+1 {{'hetero.recv_task' op stage 2 receives activations from stage 1, not stage 0}}
    hetero.recv_task activation 0 from 0 stage 2
  }
  hetero.stage_program 1 {
  }
}

// -----

func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 3 microbatches = 1 placement = [0, 1, 0] {
  hetero.stage 0 forward @id backward @id
  hetero.stage 1 forward @id backward @id
  hetero.stage 2 forward @id backward @id
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
    // expected-error @+1 {{'hetero.bwd' op stage 3 is outside the pipeline (stages 0..2)}}
    hetero.bwd 0 stage 3
  }
  hetero.stage_program 1 {
  }
}

// -----

func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 3 microbatches = 1 placement = [0, 1, 0] {
  hetero.stage 0 forward @id backward @id
  hetero.stage 1 forward @id backward @id
  hetero.stage 2 forward @id backward @id
}
// expected-error @+1 {{'hetero.schedule' op rank 1 of 2 has no 'hetero.stage_program'}}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
  }
}

// -----

func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 3 microbatches = 1 placement = [0, 1, 0] {
  hetero.stage 0 forward @id backward @id
  hetero.stage 1 forward @id backward @id
  hetero.stage 2 forward @id backward @id
}
hetero.schedule @s for @p group_size = 1 {
  hetero.stage_program 0 {
  }
  // expected-error @+1 {{'hetero.stage_program' op rank 0 already has a 'hetero.stage_program' in this hetero.schedule}}
  hetero.stage_program 0 {
  }
}

// -----

func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
hetero.pipeline @p stages = 3 microbatches = 1 placement = [0, 1, 0] {
  hetero.stage 0 forward @id backward @id
  hetero.stage 1 forward @id backward @id
  hetero.stage 2 forward @id backward @id
}
hetero.schedule @s for @p group_size = 1 {
  // expected-error @+1 {{'hetero.stage_program' op rank 2 is outside the pipeline (ranks 0..1)}}
  hetero.stage_program 2 {
  }
}

// -----

// A rank far beyond the stages: reported, without a table of every rank.
func.func @id(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
// expected-error @+1 {{'hetero.pipeline' op places no stage on rank 1 of 1000000000001}}
hetero.pipeline @p stages = 2 microbatches = 2 placement = [0, 1000000000000] {
  hetero.stage 0 forward @id backward @id
  hetero.stage 1 forward @id backward @id
}
