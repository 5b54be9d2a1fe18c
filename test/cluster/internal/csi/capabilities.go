package csi

import (
	"fmt"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
)

// checkCapabilities reports whether the requested capabilities ask for a
// block volume, or why they cannot be served: every volume lives on one node,
// so a multi-node access mode is refused rather than pretended.
func checkCapabilities(caps []*csipb.VolumeCapability) (block bool, err error) {
	if len(caps) == 0 {
		return false, fmt.Errorf("volume_capabilities is required")
	}
	sawBlock, sawMount := false, false
	for i, c := range caps {
		if err := checkCapability(c); err != nil {
			return false, fmt.Errorf("volume_capabilities[%d]: %w", i, err)
		}
		if c.GetBlock() != nil {
			sawBlock = true
		} else {
			sawMount = true
		}
	}
	if sawBlock && sawMount {
		return false, fmt.Errorf("volume_capabilities ask for both block and mount access; a volume is one or the other")
	}
	return sawBlock, nil
}

func checkCapability(c *csipb.VolumeCapability) error {
	if c == nil {
		return fmt.Errorf("is empty")
	}
	if c.GetBlock() == nil && c.GetMount() == nil {
		return fmt.Errorf("access_type is required (block or mount)")
	}
	if c.GetAccessMode() == nil {
		return fmt.Errorf("access_mode is required")
	}
	switch mode := c.GetAccessMode().GetMode(); mode {
	case csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER,
		csipb.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY,
		csipb.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER,
		csipb.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER:
		return nil
	default:
		return fmt.Errorf("access mode %s is not supported: each volume lives on one node (use a SINGLE_NODE_* mode: ReadWriteOnce or ReadWriteOncePod)", mode)
	}
}

func modeName(block bool) string {
	if block {
		return "block"
	}
	return "filesystem"
}
