// Package pbtest holds Go code that protoc and protoc-gen-go generated from the test
// messages in connectors/formats/testdata/protobuf. The protobuf format's tests use it as
// the independent implementation: messages built and marshalled by generated code (whose
// descriptors protoc wrote) are read by pipesql, and what pipesql writes is unmarshalled
// into them. Regenerate with (Debian's protobuf-compiler, and go install
// google.golang.org/protobuf/cmd/protoc-gen-go at go.mod's protobuf version):
//
//	go generate ./connectors/formats/internal/pbtest
package pbtest

//go:generate protoc -I ../../testdata/protobuf --go_out=. --go_opt=paths=source_relative order.proto legacy.proto
//go:generate protoc -I ../../testdata/protobuf --include_imports --descriptor_set_out=../../testdata/protobuf/order.desc order.proto legacy.proto
