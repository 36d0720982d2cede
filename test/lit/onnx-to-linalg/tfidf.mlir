// RUN: %opt %s --lower-to-linalg | FileCheck %s

// TfIdfVectorizer: tokens by a table over the pool's value range (strings: binary
// search with om_str_cmp), then scf.for rows x skip distances x starts walking
// the trie (root children dense; deeper, a search in the parent's run of the
// edges sorted by parent, token: first[node] CSR), i32 counts, then the weights.
// CHECK-LABEL: func.func @tfidf
// CHECK: tensor.expand_shape %arg0 {{\[}}[0, 1]] output_shape [1, %{{.*}}] : tensor<?xi64> into tensor<1x?xi64>
// CHECK: arith.constant dense<[0, 1, 2]> : tensor<3xi64>
// CHECK: linalg.generic
// root children, first[node], edge tokens, children, columns
// CHECK: arith.constant dense<[1, 2, 3]> : tensor<3xi64>
// CHECK: arith.constant dense<[0, 0, 1, 2, 2, 2, 2]> : tensor<7xi64>
// CHECK: arith.constant dense<[1, 2]> : tensor<2xi64>
// CHECK: arith.constant dense<[4, 5]> : tensor<2xi64>
// CHECK: arith.constant dense<[-1, 0, 1, 2, 3, 4]> : tensor<6xi64>
// distances: [1, max(1, min(2, C - 1))]
// CHECK: arith.minsi %c2, %{{.*}} : index
// CHECK: scf.for
// CHECK: scf.for %{{.*}} = %c1{{.*}} to %{{.*}} step
// CHECK: scf.for
// CHECK: tensor.insert %{{.*}} : tensor<1x5xi32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<1x5xf32> into tensor<5xf32>
// The string input: N = 2 static, no N > 0 check; IDF picks the weight when the count is > 0.
// CHECK: func.call @om_str_cmp
// CHECK: arith.constant dense<[5.000000e-01, 2.000000e+00, 4.000000e+00]> : tensor<3xf32>
// CHECK: arith.cmpi sgt
// CHECK: arith.select
// CHECK-NOT: onnx.tf_idf
func.func @tfidf(%arg0: tensor<?xi64> {onnx.name = "x"}, %arg1: tensor<2x?x!onnx.string> {onnx.name = "s"}) -> (tensor<5xf32> {onnx.name = "y"}, tensor<2x3xf32> {onnx.name = "z"}) attributes {onnx.graph_name = "g"} {
  %0 = "onnx.tf_idf_vectorizer"(%arg0) {max_gram_length = 2 : si64, max_skip_count = 1 : si64, min_gram_length = 1 : si64, mode = "TF", ngram_counts = array<i64: 0, 3>, ngram_indexes = array<i64: 0, 1, 2, 3, 4>, pool_int64s = array<i64: 1, 2, 3, 1, 2, 2, 3>} : (tensor<?xi64>) -> tensor<5xf32>
  %1 = "onnx.tf_idf_vectorizer"(%arg1) {max_gram_length = 1 : si64, max_skip_count = 0 : si64, min_gram_length = 1 : si64, mode = "IDF", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 0, 1, 2>, pool_strings = ["b", "a", "c"], weights = array<f32: 0.5, 2.0, 4.0>} : (tensor<2x?x!onnx.string>) -> tensor<2x3xf32>
  return %0, %1 : tensor<5xf32>, tensor<2x3xf32>
}
