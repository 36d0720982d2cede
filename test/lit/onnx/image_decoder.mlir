// RUN: %opt %s --shape-inference | FileCheck %s

// [H, W, C] uint8, H and W known only at run time; C from pixel_format.
// CHECK-LABEL: func.func @image_decoder
// CHECK: "onnx.image_decoder"{{.*}} -> tensor<?x?x3xui8>
// CHECK: "onnx.image_decoder"{{.*}} -> tensor<?x?x3xui8>
// CHECK: "onnx.image_decoder"{{.*}} -> tensor<?x?x1xui8>
func.func @image_decoder(%x: tensor<?xui8>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %0 = "onnx.image_decoder"(%x) {pixel_format = "RGB"} : (tensor<?xui8>) -> !onnx.unknown
  %1 = "onnx.image_decoder"(%x) {pixel_format = "BGR"} : (tensor<?xui8>) -> !onnx.unknown
  %2 = "onnx.image_decoder"(%x) {pixel_format = "Grayscale"} : (tensor<?xui8>) -> !onnx.unknown
  return %0, %1, %2 : !onnx.unknown, !onnx.unknown, !onnx.unknown
}
