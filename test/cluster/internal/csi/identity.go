package csi

import (
	"context"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"ferry.dev/cluster/internal/layout"
)

func (d *Driver) GetPluginInfo(context.Context, *csipb.GetPluginInfoRequest) (*csipb.GetPluginInfoResponse, error) {
	return &csipb.GetPluginInfoResponse{Name: layout.DriverName, VendorVersion: d.opts.Version}, nil
}

func (d *Driver) GetPluginCapabilities(context.Context, *csipb.GetPluginCapabilitiesRequest) (*csipb.GetPluginCapabilitiesResponse, error) {
	service := func(t csipb.PluginCapability_Service_Type) *csipb.PluginCapability {
		return &csipb.PluginCapability{Type: &csipb.PluginCapability_Service_{Service: &csipb.PluginCapability_Service{Type: t}}}
	}
	caps := []*csipb.PluginCapability{service(csipb.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS)}
	if d.opts.Controller {
		caps = append(caps,
			service(csipb.PluginCapability_Service_CONTROLLER_SERVICE),
			service(csipb.PluginCapability_Service_GROUP_CONTROLLER_SERVICE),
			service(csipb.PluginCapability_Service_SNAPSHOT_METADATA_SERVICE),
			&csipb.PluginCapability{Type: &csipb.PluginCapability_VolumeExpansion_{
				VolumeExpansion: &csipb.PluginCapability_VolumeExpansion{Type: csipb.PluginCapability_VolumeExpansion_ONLINE}}})
	}
	return &csipb.GetPluginCapabilitiesResponse{Capabilities: caps}, nil
}

func (d *Driver) Probe(context.Context, *csipb.ProbeRequest) (*csipb.ProbeResponse, error) {
	return &csipb.ProbeResponse{Ready: wrapperspb.Bool(true)}, nil
}
