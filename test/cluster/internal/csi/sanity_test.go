package csi

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"
)

// accessTypeEnv selects the access type of a sanity run. Ginkgo runs its specs
// once per process, so the mount run starts this test binary again for the block run.
const accessTypeEnv = "FERRY_CSI_SANITY_ACCESS_TYPE"

// TestSanity runs the CSI sanity suite (csi-test's pkg/sanity) against the
// driver over its socket, with filesystem volumes and then with block volumes.
func TestSanity(t *testing.T) {
	accessType := os.Getenv(accessTypeEnv)
	if accessType == "" {
		accessType = "mount"
		cmd := exec.Command(os.Args[0], "-test.run", "^TestSanity$", "-test.v")
		cmd.Env = append(os.Environ(), accessTypeEnv+"=block")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("the sanity suite failed with block volumes: %v\n%s", err, out)
		} else {
			t.Logf("block volumes:\n%s", tail(out, 2000))
		}
	}
	c := startDriver(t, 0)
	dir := t.TempDir()
	config := sanity.NewTestConfig()
	config.Address = c.endpoint
	config.TargetPath = filepath.Join(dir, "target")
	config.StagingPath = filepath.Join(dir, "staging")
	config.TestVolumeSize = 64 << 20
	config.TestVolumeExpandSize = 128 << 20
	config.TestVolumeAccessType = accessType
	config.IdempotentCount = 2
	sanity.Test(t, config)
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
