module ferry.dev/test/tools/chunkref

go 1.22

require github.com/restic/chunker v0.4.0
