package nodeagent

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// There is no container runtime and no image store: an image name only
// chooses how the container's argv maps to programs on the host.
//
//	image                     argv[0] in the pod            runs on the host
//	ferry* (ferry:dev, ...)   ferry-step ARGS               <checkout>/node_modules/.bin/node <checkout>/src/entry/step.ts ARGS
//	                          ferry-dispatcher ARGS         ... <checkout>/src/entry/dispatcher.ts ARGS
//	                          ferry ARGS                    ... <checkout>/src/entry/cli.ts ARGS
//	                          node ARGS                     <checkout>/node_modules/.bin/node ARGS (working dir: the checkout)
//	                          (no command)                  as `ferry` (the image's entrypoint is the CLI)
//	anything else (busybox)   the argv unchanged            resolved in the host's PATH: /bin/sh, coreutils
//
// Containers of a ferry image start in the checkout, so relative paths such as
// `node src/entry/step.ts` work; other images start in /.

// imageProfile is what the agent knows of one image.
type imageProfile struct {
	workingDir string
	path       string
	entrypoint []string
	commands   map[string][]string
}

const hostPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

func ferryProfile(checkout string) imageProfile {
	node := filepath.Join(checkout, "node_modules", ".bin", "node")
	entry := func(name string) []string { return []string{node, filepath.Join(checkout, "src", "entry", name+".ts")} }
	return imageProfile{
		workingDir: checkout,
		path:       filepath.Join(checkout, "node_modules", ".bin") + ":" + hostPath,
		entrypoint: []string{"ferry"},
		commands: map[string][]string{
			"ferry-step":       entry("step"),
			"ferry-dispatcher": entry("dispatcher"),
			"ferry":            entry("cli"),
			"node":             {node},
		},
	}
}

var hostProfile = imageProfile{workingDir: "/", path: hostPath}

// profileFor picks the profile of an image reference such as
// "registry.example/team/ferry:dev" or "busybox:1.36".
func profileFor(image, checkout string) imageProfile {
	name := image
	if at := strings.IndexByte(name, '@'); at >= 0 {
		name = name[:at]
	}
	name = path.Base(name)
	if colon := strings.IndexByte(name, ':'); colon >= 0 {
		name = name[:colon]
	}
	if strings.HasPrefix(name, "ferry") {
		return ferryProfile(checkout)
	}
	return hostProfile
}

// argv combines command and args as a runtime would (command replaces the
// entrypoint, args follow) and maps argv[0] through the profile.
func (p imageProfile) argv(image string, command, args []string) ([]string, error) {
	argv := append(append([]string{}, command...), args...)
	if len(command) == 0 {
		argv = append(append([]string{}, p.entrypoint...), args...)
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("image %s has no entrypoint in the box, so the container needs a command", image)
	}
	if mapped, ok := p.commands[argv[0]]; ok {
		argv = append(append([]string{}, mapped...), argv[1:]...)
	}
	return argv, nil
}
