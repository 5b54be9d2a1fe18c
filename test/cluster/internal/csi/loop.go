package csi

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// loopMajor is the block major number of loop devices.
const loopMajor = 7

// attachLoop attaches an image file to a free loop device (read-only on request) and returns the device.
func attachLoop(image string, readOnly bool) (string, error) {
	args := []string{"--find", "--show"}
	if readOnly {
		args = append(args, "--read-only")
	}
	out, err := exec.Command("losetup", append(args, image)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("losetup %s failed: %v: %s", image, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

func detachLoop(dev string) error {
	if out, err := exec.Command("losetup", "--detach", dev).CombinedOutput(); err != nil {
		return fmt.Errorf("losetup --detach %s failed: %v: %s", dev, err, out)
	}
	return nil
}

// loopDeviceOf returns the loop device a path is (a device node, or a file a
// device node is bind-mounted on), or "" if it is none.
func loopDeviceOf(path string) string {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFBLK || unix.Major(st.Rdev) != loopMajor {
		return ""
	}
	return fmt.Sprintf("/dev/loop%d", unix.Minor(st.Rdev))
}

// refreshLoopDevices makes every loop device backed by image see its current
// length, so a grown block volume is grown where it is published too.
func refreshLoopDevices(image string) error {
	devices, err := filepath.Glob("/sys/block/loop*/loop/backing_file")
	if err != nil {
		return err
	}
	for _, f := range devices {
		backing, err := os.ReadFile(f)
		if err != nil || strings.TrimSpace(string(backing)) != image {
			continue
		}
		dev := "/dev/" + filepath.Base(filepath.Dir(filepath.Dir(f)))
		if out, err := exec.Command("losetup", "--set-capacity", dev).CombinedOutput(); err != nil {
			return fmt.Errorf("losetup --set-capacity %s failed: %v: %s", dev, err, out)
		}
	}
	return nil
}
