// Command mcptask is a command-line client and debugging tool for MCP tasks.
package main

import (
	"os"

	"github.com/mcptask/mcptask/cmd"
)

func main() { os.Exit(cmd.Main()) }
