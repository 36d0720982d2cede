// RUN: not %opt %s --lower-to-linalg | FileCheck %s

// All missing lowerings are listed at once, and nothing was lowered.
// CHECK: error: 2 unsupported op type(s) (no lowering): ImageDecoder (nodes: {{.*}}); TfIdfVectorizer (nodes: {{.*}})
// CHECK-NOT: linalg
func.func @f(%i: tensor<6xi64>, %b: tensor<100xui8>, %x: tensor<2xf32>) -> (tensor<4xf32>, tensor<?x?x3xui8>, tensor<2xf32>) {
  %0 = "onnx.tf_idf_vectorizer"(%i) {mode = "TF", min_gram_length = 1 : si64, max_gram_length = 1 : si64, max_skip_count = 0 : si64, ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 0, 1, 2, 3>, pool_int64s = array<i64: 2, 3, 5, 4>} : (tensor<6xi64>) -> tensor<4xf32>
  %1 = "onnx.image_decoder"(%b) {pixel_format = "RGB"} : (tensor<100xui8>) -> tensor<?x?x3xui8>
  %2 = "onnx.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<?x?x3xui8>, tensor<2xf32>
}
