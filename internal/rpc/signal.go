package rpc

import "syscall"

// sigterm is the polite stop signal of the shutdown sequence.
var sigterm = syscall.SIGTERM
