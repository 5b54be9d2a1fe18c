// chunkref answers questions with the real github.com/restic/chunker library, so ferry's tests can compare
// their own chunker and polynomial code against the implementation restic ships.
//
//	chunkref chunk <polynomial-hex> <file>   one line per chunk: offset length sha256
//	chunkref irreducible <polynomial-hex>... one line per polynomial: true or false
//	chunkref derive <random-bytes-hex>       the polynomial DerivePolynomial picks from those bytes, in hex
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/restic/chunker"
)

func parsePol(s string) (chunker.Pol, error) {
	n, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("polynomial %q is not hexadecimal: %w", s, err)
	}
	return chunker.Pol(n), nil
}

func chunkFile(polHex, path string) error {
	pol, err := parsePol(polHex)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()

	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	c := chunker.New(f, pol)
	buf := make([]byte, chunker.MaxSize)
	for {
		chunk, err := c.Next(buf)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		sum := sha256.Sum256(chunk.Data)
		fmt.Fprintf(out, "%d %d %x\n", chunk.Start, chunk.Length, sum)
	}
}

func irreducible(polHexes []string) error {
	for _, s := range polHexes {
		pol, err := parsePol(s)
		if err != nil {
			return err
		}
		fmt.Println(pol.Irreducible())
	}
	return nil
}

func derive(randomHex string) error {
	random, err := hex.DecodeString(randomHex)
	if err != nil {
		return fmt.Errorf("random bytes are not hexadecimal: %w", err)
	}
	pol, err := chunker.DerivePolynomial(bytes.NewReader(random))
	if err != nil {
		return err
	}
	fmt.Printf("%x\n", uint64(pol))
	return nil
}

func run(args []string) error {
	switch {
	case len(args) == 3 && args[0] == "chunk":
		return chunkFile(args[1], args[2])
	case len(args) >= 2 && args[0] == "irreducible":
		return irreducible(args[1:])
	case len(args) == 2 && args[0] == "derive":
		return derive(args[1])
	}
	return errors.New("usage: chunkref chunk <polynomial-hex> <file> | irreducible <polynomial-hex>... | derive <random-bytes-hex>")
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "chunkref:", err)
		os.Exit(1)
	}
}
