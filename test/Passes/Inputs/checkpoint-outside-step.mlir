// A hetero.checkpoint written by hand, outside a stage program: no timeline
// says where its network is idle.
func.func @step(%w: tensor<8xf32>, %step: i64) {
  // The error points here.
  hetero.checkpoint %w at %step replicas = 2 of 2 placement = group : tensor<8xf32>
  return
}
