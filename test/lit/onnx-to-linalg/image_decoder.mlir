// RUN: %opt %s --lower-to-linalg | FileCheck %s

// ImageDecoder calls the C runtime (om_image.c): the bytes go in as their
// strided view (pointer, offset, stride, length), with the pixel format
// (2 = Grayscale) and the check id of its first failure message; H and W
// come back at run time, the pixels are copied into a fresh buffer.
// CHECK-LABEL: func.func @decode
// CHECK: bufferization.to_buffer %arg0 read_only : tensor<?xi8> to memref<?xi8, strided<[?], offset: ?>>
// CHECK: memref.extract_strided_metadata
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: %[[IMG:.*]] = call @om_image_decode(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2_i64, %c0_i64)
// CHECK: call @om_image_dim(%[[IMG]], %c0_i64
// CHECK: call @om_image_dim(%[[IMG]], %c1_i64
// CHECK: %[[BUF:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?x1xi8>
// CHECK: call @om_image_read(%[[IMG]]
// CHECK: bufferization.to_tensor %[[BUF]] restrict writable : memref<?x?x1xi8> to tensor<?x?x1xi8>
func.func @decode(%x: tensor<?xui8>) -> tensor<?x?x1xui8> {
  %0 = "onnx.image_decoder"(%x) {pixel_format = "Grayscale"} : (tensor<?xui8>) -> tensor<?x?x1xui8>
  return %0 : tensor<?x?x1xui8>
}
