package formats

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/pipesql/pipesql/config"
)

// ErrProtoMessage is returned (wrapped) when the protobuf message of a table cannot be
// found: the descriptor set or .proto file cannot be read or compiled, or it holds no
// message of the configured name.
var ErrProtoMessage = errors.New("protobuf message not found")

// protoSource is where a table's message type comes from: a FileDescriptorSet written by
// protoc --descriptor_set_out, or a .proto file compiled in process.
type protoSource struct {
	descriptorFile string
	protoFile      string
	importPaths    []string
}

// protoFilesCache keeps compiled descriptors by source and file modification time: every
// partition's decoder would otherwise compile the same .proto again.
var protoFilesCache struct {
	sync.Mutex
	m map[string]protoFilesEntry
}

type protoFilesEntry struct {
	mtime time.Time
	files []protoreflect.FileDescriptor
}

// load returns the files of the source, the first being the one named (for a .proto)
// and the rest everything it imports; for a descriptor set, every file of the set.
func (s protoSource) load() ([]protoreflect.FileDescriptor, error) {
	path := s.descriptorFile
	if path == "" {
		path = s.protoFile
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProtoMessage, err)
	}
	key := s.descriptorFile + "\x00" + s.protoFile + "\x00" + strings.Join(s.importPaths, "\x00")
	protoFilesCache.Lock()
	defer protoFilesCache.Unlock()
	if e, ok := protoFilesCache.m[key]; ok && e.mtime.Equal(st.ModTime()) {
		return e.files, nil
	}
	var files []protoreflect.FileDescriptor
	if s.descriptorFile != "" {
		files, err = loadDescriptorSet(s.descriptorFile)
	} else {
		files, err = compileProtoFile(s.protoFile, s.importPaths)
	}
	if err != nil {
		return nil, err
	}
	if protoFilesCache.m == nil {
		protoFilesCache.m = map[string]protoFilesEntry{}
	}
	protoFilesCache.m[key] = protoFilesEntry{mtime: st.ModTime(), files: files}
	return files, nil
}

// loadDescriptorSet reads a FileDescriptorSet. Imports missing from the set (protoc
// without --include_imports) are found among the well-known types linked into pipesql.
func loadDescriptorSet(path string) ([]protoreflect.FileDescriptor, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProtoMessage, err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("%w: %s is not a FileDescriptorSet (protoc --descriptor_set_out): %v", ErrProtoMessage, path, err)
	}
	byName := map[string]*descriptorpb.FileDescriptorProto{}
	for _, f := range set.File {
		byName[f.GetName()] = f
	}
	reg := new(protoregistry.Files)
	var files []protoreflect.FileDescriptor
	var build func(name string, stack []string) (protoreflect.FileDescriptor, error)
	build = func(name string, stack []string) (protoreflect.FileDescriptor, error) {
		if fd, err := reg.FindFileByPath(name); err == nil {
			return fd, nil
		}
		fp, ok := byName[name]
		if !ok {
			if fd, err := protoregistry.GlobalFiles.FindFileByPath(name); err == nil {
				return fd, nil
			}
			if fd, err := standardImport(name); err == nil {
				return fd, nil
			}
			return nil, fmt.Errorf("%w: %s: import %s is not in the descriptor set (run protoc with --include_imports)", ErrProtoMessage, path, name)
		}
		for _, s := range stack {
			if s == name {
				return nil, fmt.Errorf("%w: %s: import cycle through %s", ErrProtoMessage, path, name)
			}
		}
		for _, dep := range fp.Dependency {
			if _, err := build(dep, append(stack, name)); err != nil {
				return nil, err
			}
		}
		fd, err := protodesc.NewFile(fp, fileResolver{reg})
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %s: %v", ErrProtoMessage, path, name, err)
		}
		if err := reg.RegisterFile(fd); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrProtoMessage, path, err)
		}
		files = append(files, fd)
		return fd, nil
	}
	for _, f := range set.File {
		if _, err := build(f.GetName(), nil); err != nil {
			return nil, err
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: %s holds no files", ErrProtoMessage, path)
	}
	return files, nil
}

// fileResolver resolves a descriptor set's imports among the files built so far, then
// among the well-known types.
type fileResolver struct{ reg *protoregistry.Files }

func (r fileResolver) FindFileByPath(p string) (protoreflect.FileDescriptor, error) {
	if fd, err := r.reg.FindFileByPath(p); err == nil {
		return fd, nil
	}
	if fd, err := protoregistry.GlobalFiles.FindFileByPath(p); err == nil {
		return fd, nil
	}
	return standardImport(p)
}

func (r fileResolver) FindDescriptorByName(n protoreflect.FullName) (protoreflect.Descriptor, error) {
	if d, err := r.reg.FindDescriptorByName(n); err == nil {
		return d, nil
	}
	return protoregistry.GlobalFiles.FindDescriptorByName(n)
}

// standardImport returns one of the well-known .proto files (google/protobuf/*.proto)
// as protocompile ships them.
func standardImport(name string) (protoreflect.FileDescriptor, error) {
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: func(string) (io.ReadCloser, error) { return nil, os.ErrNotExist },
	})}
	files, err := c.Compile(context.Background(), name)
	if err != nil {
		return nil, err
	}
	return files[0], nil
}

// compileProtoFile compiles a .proto file and its imports with protocompile. Imports are
// looked up in importPaths (default: the file's directory), then among the well-known
// types.
func compileProtoFile(path string, importPaths []string) ([]protoreflect.FileDescriptor, error) {
	name := filepath.Base(path)
	if len(importPaths) == 0 {
		importPaths = []string{filepath.Dir(path)}
	} else {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrProtoMessage, err)
		}
		name = ""
		for _, dir := range importPaths {
			d, err := filepath.Abs(dir)
			if err != nil {
				continue
			}
			if rel, err := filepath.Rel(d, abs); err == nil && !strings.HasPrefix(rel, "..") {
				name = filepath.ToSlash(rel)
				break
			}
		}
		if name == "" {
			return nil, fmt.Errorf("%w: %s is not under any of the import paths %s", ErrProtoMessage, path, strings.Join(importPaths, ";"))
		}
	}
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: importPaths}),
	}
	res, err := c.Compile(context.Background(), name)
	if err != nil {
		// protocompile's errors carry file:line:col
		return nil, fmt.Errorf("%w: %v", ErrProtoMessage, err)
	}
	root := res[0]
	files := []protoreflect.FileDescriptor{root}
	seen := map[string]bool{root.Path(): true}
	var walk func(fd protoreflect.FileDescriptor)
	walk = func(fd protoreflect.FileDescriptor) {
		imps := fd.Imports()
		for i := 0; i < imps.Len(); i++ {
			imp := imps.Get(i).FileDescriptor
			if seen[imp.Path()] {
				continue
			}
			seen[imp.Path()] = true
			files = append(files, imp)
			walk(imp)
		}
	}
	walk(root)
	return files, nil
}

// findMessage finds the message named name in files: by its full protobuf name
// (com.example.Order), else by the Java class protoc generates for it (java_package,
// the outer class unless java_multiple_files, nested classes with '.' or '$'), which
// is what Flink's protobuf.message-class-name holds.
func findMessage(files []protoreflect.FileDescriptor, name string) (protoreflect.MessageDescriptor, error) {
	name = strings.TrimPrefix(strings.TrimSpace(name), ".")
	javaName := strings.ReplaceAll(name, "$", ".")
	var all []string
	var byJava protoreflect.MessageDescriptor
	for _, f := range files {
		javaPrefix := javaClassPrefix(f)
		var walk func(ms protoreflect.MessageDescriptors, javaParent string) protoreflect.MessageDescriptor
		walk = func(ms protoreflect.MessageDescriptors, javaParent string) protoreflect.MessageDescriptor {
			for i := 0; i < ms.Len(); i++ {
				m := ms.Get(i)
				if m.IsMapEntry() {
					continue
				}
				if string(m.FullName()) == name {
					return m
				}
				all = append(all, string(m.FullName()))
				j := joinName(javaParent, string(m.Name()))
				if byJava == nil && j == javaName {
					byJava = m
				}
				if found := walk(m.Messages(), j); found != nil {
					return found
				}
			}
			return nil
		}
		if m := walk(f.Messages(), javaPrefix); m != nil {
			return m, nil
		}
	}
	if byJava != nil {
		return byJava, nil
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%w: '%s': the files hold no messages", ErrProtoMessage, name)
	}
	sort.Strings(all)
	hint := ""
	if c := config.Closest(name, all, config.SuggestionDistance(name)); c != "" {
		hint = ": did you mean '" + c + "'?"
	} else if len(all) <= 10 {
		hint = " (messages: " + strings.Join(all, ", ") + ")"
	}
	return nil, fmt.Errorf("%w: no message '%s'%s", ErrProtoMessage, name, hint)
}

func joinName(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// javaClassPrefix is what protoc's Java generator puts before a top-level message's
// class name: the java_package (else the proto package) and, unless
// java_multiple_files, the outer class.
func javaClassPrefix(f protoreflect.FileDescriptor) string {
	opts, _ := f.Options().(*descriptorpb.FileOptions)
	pkg := string(f.Package())
	if opts.GetJavaPackage() != "" {
		pkg = opts.GetJavaPackage()
	}
	if opts.GetJavaMultipleFiles() {
		return pkg
	}
	outer := opts.GetJavaOuterClassname()
	if outer == "" {
		outer = javaOuterClassName(f)
	}
	return joinName(pkg, outer)
}

// javaOuterClassName derives the outer class as protoc does: the file's base name in
// camel case, with "OuterClass" appended when a top-level type has that name.
func javaOuterClassName(f protoreflect.FileDescriptor) string {
	base := strings.TrimSuffix(filepath.Base(f.Path()), ".proto")
	var b strings.Builder
	up := true
	for _, r := range base {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ':
			up = true
		case unicode.IsDigit(r):
			b.WriteRune(r)
			up = true
		case up:
			b.WriteRune(unicode.ToUpper(r))
			up = false
		default:
			b.WriteRune(r)
		}
	}
	name := b.String()
	for i := 0; i < f.Messages().Len(); i++ {
		if string(f.Messages().Get(i).Name()) == name {
			return name + "OuterClass"
		}
	}
	for i := 0; i < f.Enums().Len(); i++ {
		if string(f.Enums().Get(i).Name()) == name {
			return name + "OuterClass"
		}
	}
	for i := 0; i < f.Services().Len(); i++ {
		if string(f.Services().Get(i).Name()) == name {
			return name + "OuterClass"
		}
	}
	return name
}
