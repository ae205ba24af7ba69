package emu

import (
	"fmt"

	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/weave"
)

// A struct file's reference count, for a file the tasks of one process
// use at once (fs/file.c, fs/file_table.c, include/linux/file.h, v6.6).
//
// Every read(2) and write(2) looks its descriptor up with fdget_pos() ->
// __fdget_pos() -> __fget_light(). When the task's descriptor table is
// its own (files->count == 1: a forked process) the lookup takes no
// reference; when the table is shared (threads: pthread_create()'s
// CLONE_FILES) it takes one, __fget_files() -> get_file_rcu()'s
// atomic_long_inc_not_zero(&file->f_count), and the syscall's fdput()
// drops it, fput()'s atomic_long_dec_and_test(). In hackbench's thread
// mode a group's 20 senders write one receiver's descriptor, so 20 CPUs
// take the f_count line of one struct file twice a message (with f_op,
// f_inode and f_mode beside it in the line, which vfs_write() reads); as
// processes each sender's lookup only reads its own table. (v6.13's
// file_ref_t keeps the count one atomic in struct file.)
//
// A File is that line, homed on the node of the CPU that opened the file
// (alloc_empty_file(): kmem_cache_alloc()). A workload marks the action
// whose syscall takes the reference (FdGet: the syscall's entry) and the
// one that drops it (FdPut: its return); the CPU logs each as an RMW on
// the line, charged to __fget_light and fput, and the weave prices the
// transfers. Simplified: only files shared by several tasks are logged (a
// descriptor one thread alone uses keeps its line in that CPU's cache:
// its RMWs cost what the syscall's base cost already counts), and the
// lookup's read of the descriptor table (files->fdt, shared and read-only
// while nobody opens or closes) is not.
type File struct {
	name string       // fixed
	line weave.LineID // struct file's first line: f_count, f_op, f_mode; fixed
}

// NewFile creates a shared struct file's line in the Sim's contention
// Space, homed on cpu's node. It is for set-up time only, like NewTask.
func (s *Sim) NewFile(name string, cpu int) (*File, error) {
	if cpu < 0 || cpu >= len(s.cpus) {
		return nil, fmt.Errorf("file %q: cpu %d out of range [0, %d)", name, cpu, len(s.cpus))
	}
	return &File{name: name, line: s.space.NewLine("file("+name+").f_count", s.m.CPUs[cpu].Node)}, nil
}

func (f *File) String() string {
	if f == nil {
		return "file(nil)"
	}
	return "file(" + f.name + ")"
}

// FdGet marks the action as the entry of a syscall on f through a shared
// descriptor table: __fget_light() takes a reference, an RMW of f's line,
// before the action's kernel work.
func (a Action) FdGet(f *File) Action {
	if f == nil {
		panic("emu: FdGet(nil)")
	}
	a.FileGet = f
	return a
}

// FdPut marks the action as the return of a syscall on f through a shared
// descriptor table: fdput() drops the reference, an RMW of f's line, after
// the action's kernel work and its pipe steps (at its decision point, like
// those: hold.go).
func (a Action) FdPut(f *File) Action {
	if f == nil {
		panic("emu: FdPut(nil)")
	}
	a.FilePut = f
	return a
}

// fileRef logs one reference count change of f on this CPU, charged to
// sym, and charges its uncontended cost.
func (rq *RQ) fileRef(f *File, sym Symbol) {
	rq.log.Record(rq.logNow(), f.line, hwmodel.RMW, rq.site(sym))
	rq.accessCost(sym, hwmodel.RMW)
}
