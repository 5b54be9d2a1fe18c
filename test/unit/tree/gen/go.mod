module ferry.dev/test/treegen

go 1.22
