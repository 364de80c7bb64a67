// RUN: hetero-opt %s --hetero-lower-to-runtime -split-input-file -verify-diagnostics

func.func @f(%g: tensor<64xf32>) -> tensor<128xf32> {
  // expected-error @+1 {{'hetero.all_gather' op with compressor 'fp16' cannot be lowered to the runtime yet; only all-reduces and buckets are compressed}}
  %0 = hetero.all_gather %g axis = 0 compress <fp16> : tensor<64xf32> -> tensor<128xf32>
  return %0 : tensor<128xf32>
}

// -----

func.func @f(%g: tensor<64xf64>) -> tensor<64xf64> {
  // expected-error @+1 {{'hetero.all_reduce' op compresses 'f64' gradients, but the runtime compresses f32 only}}
  %0 = hetero.all_reduce %g compress <topk, ratio = 0.1, scheme = allgather> : tensor<64xf64>
  return %0 : tensor<64xf64>
}

// -----

func.func @f(%g: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{'hetero.all_reduce' op uses qsgd with 256 levels; the runtime quantises to 1..127 levels}}
  %0 = hetero.all_reduce %g compress <qsgd, scheme = allgather> : tensor<64xf32>
  return %0 : tensor<64xf32>
}

// -----

func.func @f(%g: tensor<64xf64>) -> tensor<64xf64> {
  // expected-error @+1 {{'hetero.all_reduce' op synchronises 'f64' gradients sparsely, but the runtime's sparse all-reduce takes f32 only}}
  %0 = hetero.all_reduce %g sparse = coo : tensor<64xf64>
  return %0 : tensor<64xf64>
}

// -----

func.func @f(%g: tensor<4x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'hetero.all_gather' op along axis 1 cannot be lowered to the runtime yet; only axis 0 is}}
  %0 = hetero.all_gather %g axis = 1 : tensor<4x8xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @f(%g: tensor<16x8xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{'hetero.all_to_all' op along concat_axis 1 cannot be lowered to the runtime yet; only axis 0 is}}
  %0 = hetero.all_to_all %g split_axis = 0 concat_axis = 1 : tensor<16x8xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @f(%g: tensor<4xi16>) -> tensor<4xi16> {
  // expected-error @+1 {{'hetero.all_reduce' op moves elements of type 'i16', which the runtime does not support (f32, f64, f16, bf16, i8, i32, i64)}}
  %0 = hetero.all_reduce %g : tensor<4xi16>
  return %0 : tensor<4xi16>
}

// -----

shard.grid @dynamic(shape = 2x?)
func.func @f(%g: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'hetero.all_reduce' op needs a static device grid of at most 4 dimensions to be lowered to the runtime, 'dynamic' is not}}
  %0 = hetero.all_reduce %g on @dynamic : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%w: tensor<4xf32>) {
  // expected-error @+1 {{'hetero.checkpoint' op cannot be lowered to the runtime yet}}
  hetero.checkpoint %w replicas = 1 of 2 placement = ring : tensor<4xf32>
  return
}
