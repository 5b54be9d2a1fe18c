package nodeagent

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const defaultTokenSeconds = 3600

// issueToken asks the TokenRequest API for a token of the pod's own
// ServiceAccount, bound to the pod so it dies with it, and notes when it
// should be refreshed (at 80% of its life, as a kubelet does).
func (w *podWorker) issueToken(ctx context.Context, pod *corev1.Pod, src *corev1.ServiceAccountTokenProjection) ([]byte, error) {
	seconds := int64(defaultTokenSeconds)
	if src.ExpirationSeconds != nil {
		seconds = *src.ExpirationSeconds
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &seconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if src.Audience != "" {
		req.Spec.Audiences = []string{src.Audience}
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	resp, err := w.agent.kube.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("requesting a token for service account %s/%s: %w", pod.Namespace, sa, err)
	}
	issued := time.Now()
	life := resp.Status.ExpirationTimestamp.Sub(issued)
	refresh := issued.Add(life * 8 / 10)
	w.mu.Lock()
	if w.tokenRefresh.IsZero() || refresh.Before(w.tokenRefresh) {
		w.tokenRefresh = refresh
	}
	w.mu.Unlock()
	return []byte(resp.Status.Token), nil
}

// refreshTokens rewrites the projected volumes that carry tokens whenever the
// earliest token reaches its refresh time, until ctx ends.
func (w *podWorker) refreshTokens(ctx context.Context) {
	for {
		w.mu.Lock()
		due := w.tokenRefresh
		w.mu.Unlock()
		if due.IsZero() {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(due)):
		}
		w.mu.Lock()
		w.tokenRefresh = time.Time{}
		w.mu.Unlock()
		pod := w.currentPod()
		for _, v := range pod.Spec.Volumes {
			if !hasToken(v) {
				continue
			}
			files, err := w.projectedFiles(ctx, pod, v.VolumeSource)
			if err == nil {
				err = writeFiles(filepath.Join(w.dir, "volumes", v.Name), files)
			}
			if err != nil {
				w.logf("refreshing the token in volume %s: %v", v.Name, err)
				w.mu.Lock()
				w.tokenRefresh = time.Now().Add(30 * time.Second)
				w.mu.Unlock()
			}
		}
	}
}

func hasToken(v corev1.Volume) bool {
	if v.Projected == nil {
		return false
	}
	for _, s := range v.Projected.Sources {
		if s.ServiceAccountToken != nil {
			return true
		}
	}
	return false
}
