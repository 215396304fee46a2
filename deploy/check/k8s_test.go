package check

import (
	"bytes"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// k8sDir is where the manifests live, relative to the repository root.
const k8sDir = "deploy/k8s"

// secretTemplate is the Secret template, kept out of the kustomization so
// its placeholders are never applied.
const secretTemplate = "secret.example.yaml"

// firegateImage is the image name the manifests use for the server; the
// kustomization's images entry maps it to a registry and tag.
const firegateImage = "firegate"

// kustomization is the part of kustomization.yaml the checks read.
type kustomization struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Resources  []string         `json:"resources"`
	Images     []kustomizeImage `json:"images"`
}

// kustomizeImage is one entry of a kustomization's images.
type kustomizeImage struct {
	Name    string `json:"name"`
	NewName string `json:"newName"`
	NewTag  string `json:"newTag"`
}

// manifests is every object under deploy/k8s, by kind and name.
type manifests struct {
	files        []string // base names of the manifest files
	kustomize    kustomization
	deployments  map[string]*appsv1.Deployment
	services     map[string]*corev1.Service
	configMaps   map[string]*corev1.ConfigMap
	secrets      map[string]*corev1.Secret
	hpas         map[string]*autoscalingv2.HorizontalPodAutoscaler
	netpols      map[string]*networkingv1.NetworkPolicy
	secretSource map[string]string // secret name -> file
}

// docSepRE splits a multi-document YAML file.
var docSepRE = regexp.MustCompile(`(?m)^---\s*$`)

// loadManifests decodes every document of every deploy/k8s/*.yaml file
// strictly (an unknown or misspelt field is an error) into its API type.
func loadManifests(t *testing.T) *manifests {
	t.Helper()
	dir := filepath.Join(repoRoot(t), filepath.FromSlash(k8sDir))
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := &manifests{
		deployments:  map[string]*appsv1.Deployment{},
		services:     map[string]*corev1.Service{},
		configMaps:   map[string]*corev1.ConfigMap{},
		secrets:      map[string]*corev1.Secret{},
		hpas:         map[string]*autoscalingv2.HorizontalPodAutoscaler{},
		netpols:      map[string]*networkingv1.NetworkPolicy{},
		secretSource: map[string]string{},
	}
	for _, path := range paths {
		base := filepath.Base(path)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if base == "kustomization.yaml" {
			if err := yaml.Unmarshal(raw, &m.kustomize); err != nil {
				t.Fatalf("%s: %v", base, err)
			}
			continue
		}
		m.files = append(m.files, base)
		for i, doc := range docSepRE.Split(string(raw), -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			if err := m.add(base, []byte(doc)); err != nil {
				t.Fatalf("%s document %d: %v", base, i+1, err)
			}
		}
	}
	if len(m.deployments) == 0 {
		t.Fatalf("no Deployments under %s", k8sDir)
	}
	return m
}

// stripComments drops whole-line YAML comments.
func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// add decodes one document by its apiVersion and kind.
func (m *manifests) add(file string, doc []byte) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	var name string
	var err error
	switch gvk := tm.APIVersion + "/" + tm.Kind; gvk {
	case "apps/v1/Deployment":
		o := &appsv1.Deployment{}
		err, name = yaml.UnmarshalStrict(doc, o), o.Name
		m.deployments[name] = o
	case "v1/Service":
		o := &corev1.Service{}
		err, name = yaml.UnmarshalStrict(doc, o), o.Name
		m.services[name] = o
	case "v1/ConfigMap":
		o := &corev1.ConfigMap{}
		err, name = yaml.UnmarshalStrict(doc, o), o.Name
		m.configMaps[name] = o
	case "v1/Secret":
		o := &corev1.Secret{}
		err, name = yaml.UnmarshalStrict(doc, o), o.Name
		m.secrets[name] = o
		m.secretSource[name] = file
	case "autoscaling/v2/HorizontalPodAutoscaler":
		o := &autoscalingv2.HorizontalPodAutoscaler{}
		err, name = yaml.UnmarshalStrict(doc, o), o.Name
		m.hpas[name] = o
	case "networking.k8s.io/v1/NetworkPolicy":
		o := &networkingv1.NetworkPolicy{}
		err, name = yaml.UnmarshalStrict(doc, o), o.Name
		m.netpols[name] = o
	default:
		return fmt.Errorf("unexpected kind %s (add it to the checks)", gvk)
	}
	if err != nil {
		return err
	}
	if name == "" {
		return fmt.Errorf("%s without metadata.name", tm.Kind)
	}
	return nil
}

// isFiregate reports whether a container runs the server image.
func isFiregate(c corev1.Container) bool { return c.Image == firegateImage }

// podsOf returns the Deployments whose pod labels a selector matches.
func (m *manifests) podsOf(sel map[string]string) []*appsv1.Deployment {
	var out []*appsv1.Deployment
	for _, name := range slices.Sorted(maps.Keys(m.deployments)) {
		d := m.deployments[name]
		if len(sel) > 0 && labels.SelectorFromSet(sel).Matches(labels.Set(d.Spec.Template.Labels)) {
			out = append(out, d)
		}
	}
	return out
}

// containerPort resolves a probe or Service port (number or name) against
// the containers of a pod.
func containerPort(p intstr.IntOrString, cs []corev1.Container) (int32, bool) {
	for _, c := range cs {
		for _, cp := range c.Ports {
			if (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) || (p.Type == intstr.String && cp.Name == p.StrVal) {
				return cp.ContainerPort, true
			}
		}
	}
	return 0, false
}

// dockerUID is the numeric USER of the Dockerfile's runtime stage.
func dockerUID(t *testing.T) int64 {
	t.Helper()
	users := runtimeStage(t).instr("USER")
	if len(users) == 0 {
		t.Fatal("Dockerfile has no USER")
	}
	uid, _, _ := strings.Cut(args(users[len(users)-1])[0], ":")
	n, err := strconv.ParseInt(uid, 10, 64)
	if err != nil {
		t.Fatalf("Dockerfile USER %s is not numeric", uid)
	}
	return n
}

func TestK8sKustomization(t *testing.T) {
	t.Parallel()
	m := loadManifests(t)
	k := m.kustomize
	if k.Kind != "Kustomization" {
		t.Errorf("kustomization.yaml kind %q", k.Kind)
	}
	for _, r := range k.Resources {
		if !slices.Contains(m.files, r) {
			t.Errorf("kustomization lists %s, which is not a manifest in %s", r, k8sDir)
		}
	}
	for _, f := range m.files {
		switch {
		case f == secretTemplate && slices.Contains(k.Resources, f):
			t.Errorf("kustomization applies %s: its placeholders would become the real Secret", f)
		case f != secretTemplate && !slices.Contains(k.Resources, f):
			t.Errorf("%s is not listed in kustomization.yaml resources", f)
		}
	}
	if !slices.ContainsFunc(k.Images, func(i kustomizeImage) bool {
		return i.Name == firegateImage && i.NewTag != "" && i.NewTag != "latest"
	}) {
		t.Errorf("kustomization has no images entry giving %q a tag", firegateImage)
	}
}

func TestK8sDeployments(t *testing.T) {
	t.Parallel()
	m := loadManifests(t)
	uid := dockerUID(t)
	cm := m.configMaps["firegate"]
	if cm == nil {
		t.Fatal("no ConfigMap firegate")
	}
	shutdown := 30 * time.Second
	if v := cm.Data["SHUTDOWN_TIMEOUT"]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("ConfigMap SHUTDOWN_TIMEOUT %q: %v", v, err)
		}
		shutdown = d
	}

	for _, name := range []string{"firegate-api", "firegate-worker", "firegate-chrome"} {
		if m.deployments[name] == nil {
			t.Errorf("no Deployment %s", name)
		}
	}
	wantArgs := map[string]string{"firegate-api": "serve", "firegate-worker": "worker"}

	for name, d := range m.deployments {
		spec := d.Spec.Template.Spec
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("%s: selector %v does not match its pod labels %v", name, d.Spec.Selector, d.Spec.Template.Labels)
		}
		for _, c := range spec.Containers {
			where := name + "/" + c.Name
			if c.Image == "" || strings.HasSuffix(c.Image, ":latest") {
				t.Errorf("%s: image %q: name a tag (kustomize images for firegate)", where, c.Image)
			}
			if !isFiregate(c) && !strings.Contains(c.Image, ":") {
				t.Errorf("%s: image %q has no tag", where, c.Image)
			}
			req, lim := c.Resources.Requests, c.Resources.Limits
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				q, ok := req[r]
				if !ok || q.IsZero() {
					t.Errorf("%s: no %s request", where, r)
				}
				if l, ok := lim[r]; ok && l.Cmp(q) < 0 {
					t.Errorf("%s: %s limit %s below request %s", where, r, l.String(), q.String())
				}
			}
			if _, ok := lim[corev1.ResourceMemory]; !ok {
				t.Errorf("%s: no memory limit", where)
			}
			if c.ReadinessProbe == nil || c.LivenessProbe == nil {
				t.Errorf("%s: needs both a readiness and a liveness probe", where)
			}
			if c.SecurityContext == nil || c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
				t.Errorf("%s: allowPrivilegeEscalation is not false", where)
			}
			if !isFiregate(c) {
				continue
			}

			if want := wantArgs[name]; !slices.Equal(c.Args, []string{want}) || len(c.Command) != 0 {
				t.Errorf("%s: command %v args %v, want args [%s] (keeping the image's entrypoint)", where, c.Command, c.Args, want)
			}
			for _, p := range []struct {
				probe *corev1.Probe
				kind  string
				path  string
			}{{c.ReadinessProbe, "readiness", "/ready"}, {c.LivenessProbe, "liveness", "/health"}} {
				if p.probe == nil || p.probe.HTTPGet == nil {
					t.Errorf("%s: %s probe is not an HTTP GET", where, p.kind)
					continue
				}
				if p.probe.HTTPGet.Path != p.path {
					t.Errorf("%s: %s probe path %s, want %s", where, p.kind, p.probe.HTTPGet.Path, p.path)
				}
				if port, ok := containerPort(p.probe.HTTPGet.Port, []corev1.Container{c}); !ok || port != 3002 {
					t.Errorf("%s: %s probe port %s is not the server's 3002", where, p.kind, p.probe.HTTPGet.Port.String())
				}
			}
			psc := spec.SecurityContext
			if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
				t.Errorf("%s: pod securityContext.runAsNonRoot is not true", name)
			} else if psc.RunAsUser == nil || *psc.RunAsUser != uid {
				t.Errorf("%s: runAsUser %v, want the Dockerfile's USER %d", name, psc.RunAsUser, uid)
			}
			refs := map[string]bool{}
			for _, ef := range c.EnvFrom {
				switch {
				case ef.ConfigMapRef != nil:
					refs["cm:"+ef.ConfigMapRef.Name] = true
					if m.configMaps[ef.ConfigMapRef.Name] == nil {
						t.Errorf("%s: envFrom ConfigMap %s does not exist", where, ef.ConfigMapRef.Name)
					}
				case ef.SecretRef != nil:
					refs["secret:"+ef.SecretRef.Name] = true
					if m.secrets[ef.SecretRef.Name] == nil {
						t.Errorf("%s: envFrom Secret %s has no template", where, ef.SecretRef.Name)
					}
				}
			}
			if !refs["cm:firegate"] || !refs["secret:firegate"] {
				t.Errorf("%s: does not take its environment from ConfigMap and Secret firegate", where)
			}
			ann := d.Spec.Template.Annotations
			if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/path"] != "/metrics" || ann["prometheus.io/port"] != "3002" {
				t.Errorf("%s: pod annotations do not point a scraper at :3002/metrics: %v", name, ann)
			}
			if g := spec.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second <= shutdown {
				t.Errorf("%s: terminationGracePeriodSeconds %v not above SHUTDOWN_TIMEOUT %s", name, g, shutdown)
			}
			if ro := c.SecurityContext.ReadOnlyRootFilesystem; ro != nil && *ro {
				mounts := map[string]bool{}
				for _, vm := range c.VolumeMounts {
					mounts[vm.MountPath] = true
				}
				if !mounts["/data"] || !mounts["/tmp"] {
					t.Errorf("%s: read-only root file system without writable /data and /tmp", where)
				}
			}
		}
	}
}

func TestK8sServices(t *testing.T) {
	t.Parallel()
	m := loadManifests(t)
	for _, name := range []string{"firegate-api", "firegate-chrome"} {
		if m.services[name] == nil {
			t.Errorf("no Service %s", name)
		}
	}
	for name, s := range m.services {
		ds := m.podsOf(s.Spec.Selector)
		if len(ds) != 1 {
			t.Errorf("Service %s selects %d Deployments, want 1", name, len(ds))
			continue
		}
		for _, p := range s.Spec.Ports {
			target := p.TargetPort
			if target.Type == intstr.Int && target.IntVal == 0 {
				target = intstr.FromInt32(p.Port)
			}
			if _, ok := containerPort(target, ds[0].Spec.Template.Spec.Containers); !ok {
				t.Errorf("Service %s port %d: targetPort %s is not a port of %s", name, p.Port, target.String(), ds[0].Name)
			}
		}
	}
}

// TestK8sBrowserWSURL: the server reaches the Chrome pool through its
// Service, on the DevTools port, with per-client affinity.
func TestK8sBrowserWSURL(t *testing.T) {
	t.Parallel()
	m := loadManifests(t)
	raw := m.configMaps["firegate"].Data["BROWSER_WS_URL"]
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "ws") {
		t.Fatalf("BROWSER_WS_URL %q is not an http:// or ws:// URL", raw)
	}
	host, portStr, err := net.SplitHostPort(u.Host)
	if err != nil {
		t.Fatalf("BROWSER_WS_URL %q has no port", raw)
	}
	svc := m.services[strings.Split(host, ".")[0]]
	if svc == nil {
		t.Fatalf("BROWSER_WS_URL host %s is not a Service", host)
	}
	port, _ := strconv.Atoi(portStr)
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if int(svc.Spec.Ports[i].Port) == port {
			sp = &svc.Spec.Ports[i]
		}
	}
	if sp == nil {
		t.Fatalf("Service %s has no port %d", svc.Name, port)
	}
	ds := m.podsOf(svc.Spec.Selector)
	if len(ds) != 1 {
		t.Fatalf("Service %s selects %d Deployments", svc.Name, len(ds))
	}
	chrome := ds[0].Spec.Template.Spec.Containers
	if !slices.ContainsFunc(chrome, func(c corev1.Container) bool {
		return strings.Contains(c.Image, "headless-shell") || strings.Contains(c.Image, "chrome")
	}) {
		t.Errorf("BROWSER_WS_URL leads to %s, which runs no Chrome image", ds[0].Name)
	}
	if cp, ok := containerPort(sp.TargetPort, chrome); !ok || cp != 9222 {
		t.Errorf("Service %s port %d does not reach Chrome's DevTools port 9222", svc.Name, port)
	}
	if svc.Spec.SessionAffinity != corev1.ServiceAffinityClientIP {
		t.Errorf("Service %s sessionAffinity %q: want ClientIP, or a firegate pod's /json/version and websocket may reach different Chrome pods", svc.Name, svc.Spec.SessionAffinity)
	}
	if svc.Spec.Type != "" && svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("Service %s is %s: the DevTools port must stay inside the cluster", svc.Name, svc.Spec.Type)
	}
}

func TestK8sHPAs(t *testing.T) {
	t.Parallel()
	m := loadManifests(t)
	scaled := map[string]bool{}
	for name, h := range m.hpas {
		ref := h.Spec.ScaleTargetRef
		d := m.deployments[ref.Name]
		if ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" || d == nil {
			t.Errorf("HPA %s targets %s %s %s, which is not a Deployment here", name, ref.APIVersion, ref.Kind, ref.Name)
			continue
		}
		scaled[ref.Name] = true
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 1 || h.Spec.MaxReplicas < *h.Spec.MinReplicas {
			t.Errorf("HPA %s replicas min %v max %d", name, h.Spec.MinReplicas, h.Spec.MaxReplicas)
		}
		cpu := false
		for _, mt := range h.Spec.Metrics {
			cpu = cpu || (mt.Type == autoscalingv2.ResourceMetricSourceType && mt.Resource != nil && mt.Resource.Name == corev1.ResourceCPU)
		}
		if !cpu {
			t.Errorf("HPA %s does not scale on CPU", name)
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if _, ok := c.Resources.Requests[corev1.ResourceCPU]; !ok {
				t.Errorf("HPA %s: %s/%s has no CPU request, so utilization is undefined", name, d.Name, c.Name)
			}
		}
	}
	for _, want := range []string{"firegate-api", "firegate-worker"} {
		if !scaled[want] {
			t.Errorf("no HPA scales %s", want)
		}
	}
}

// TestK8sConfig: the ConfigMap and Secret template set only variables the
// server knows, secrets only in the Secret, and no real secret values.
func TestK8sConfig(t *testing.T) {
	t.Parallel()
	m := loadManifests(t)
	ex := envExample(t)
	known := map[string]bool{}
	for _, v := range serverEnv(t) {
		known[v] = true
	}
	for k := range ex {
		known[k] = true
	}
	secretish := regexp.MustCompile(`(PASSWORD|SECRET|_KEY$|DATABASE_URL|REDIS_URL)`)

	cm := m.configMaps["firegate"]
	for k := range cm.Data {
		if !known[k] {
			t.Errorf("ConfigMap firegate sets %s, which the server does not read", k)
		}
		if secretish.MatchString(k) {
			t.Errorf("ConfigMap firegate sets %s: it belongs in the Secret", k)
		}
	}
	for k, v := range cm.Data {
		if err := CheckValueLike(ex[k].Value, v); err != nil {
			t.Errorf("ConfigMap firegate %s: %v", k, err)
		}
	}
	if jt, jr := durationOr(t, cm.Data["JOB_TIMEOUT"], 5*time.Minute), durationOr(t, cm.Data["JOB_RESCUE_AFTER"], 0); jr != 0 && jr <= jt {
		t.Errorf("ConfigMap JOB_RESCUE_AFTER %s must be longer than JOB_TIMEOUT %s (the server refuses to start)", jr, jt)
	}
	for name, d := range m.deployments {
		for _, c := range d.Spec.Template.Spec.Containers {
			for _, e := range c.Env {
				if e.Name == "POD_IP" && e.ValueFrom != nil {
					continue // only expanded into BROWSER_PROXY_URL
				}
				if !known[e.Name] {
					t.Errorf("%s/%s sets %s, which the server does not read", name, c.Name, e.Name)
				} else if err := CheckValueLike(ex[e.Name].Value, e.Value); isFiregate(c) && err != nil {
					t.Errorf("%s/%s %s: %v", name, c.Name, e.Name, err)
				}
			}
		}
	}

	s := m.secrets["firegate"]
	if s == nil {
		t.Fatal("no Secret firegate template")
	}
	if m.secretSource["firegate"] != secretTemplate {
		t.Errorf("Secret firegate is in %s, want only the template %s", m.secretSource["firegate"], secretTemplate)
	}
	if len(s.Data) != 0 {
		t.Error("Secret template has base64 data: use stringData placeholders")
	}
	for _, k := range []string{"DATABASE_URL", "REDIS_URL", "BOOTSTRAP_API_KEY"} {
		if _, ok := s.StringData[k]; !ok {
			t.Errorf("Secret template does not list %s", k)
		}
	}
	for k, v := range s.StringData {
		if !known[k] {
			t.Errorf("Secret template sets %s, which the server does not read", k)
		}
		if !strings.Contains(v, "CHANGE_ME") {
			t.Errorf("Secret template %s has a value without a CHANGE_ME placeholder", k)
		}
	}
	b, err := os.ReadFile(filepath.Join(repoRoot(t), filepath.FromSlash(k8sDir), ".gitignore"))
	if err != nil || !bytes.Contains(b, []byte("secret.yaml")) {
		t.Errorf("%s/.gitignore does not keep a filled-in secret.yaml out of git", k8sDir)
	}
}

// durationOr parses a duration, or returns def for an empty string.
func durationOr(t *testing.T, s string, def time.Duration) time.Duration {
	t.Helper()
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Errorf("%q: %v", s, err)
	}
	return d
}

// envValue is a container's own env value for name.
func envValue(c corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

// TestK8sQueueSplit: api pods only enqueue; worker pods run the jobs.
func TestK8sQueueSplit(t *testing.T) {
	t.Parallel()
	m := loadManifests(t)
	for name, want := range map[string]bool{"firegate-api": true, "firegate-worker": false} {
		d := m.deployments[name]
		if d == nil {
			t.Fatalf("no Deployment %s", name)
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if !isFiregate(c) {
				continue
			}
			v, ok := envValue(c, "QUEUE_WORKERS")
			if got := ok && v == "0"; got != want {
				t.Errorf("%s QUEUE_WORKERS=0 is %v, want %v", name, got, want)
			}
		}
	}
	if v := m.configMaps["firegate"].Data["QUEUE_WORKERS"]; v == "0" {
		t.Error("ConfigMap QUEUE_WORKERS is 0: no pod would run jobs")
	}
}

// TestK8sChromeNetworkPolicy: only firegate pods reach Chrome's DevTools
// port, and Chrome cannot reach private addresses.
func TestK8sChromeNetworkPolicy(t *testing.T) {
	t.Parallel()
	m := loadManifests(t)
	chrome := m.deployments["firegate-chrome"]
	var np *networkingv1.NetworkPolicy
	for _, p := range m.netpols {
		sel, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector)
		if err == nil && !sel.Empty() && sel.Matches(labels.Set(chrome.Spec.Template.Labels)) {
			np = p
		}
	}
	if np == nil {
		t.Fatal("no NetworkPolicy selects the Chrome pods")
	}
	if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) || !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
		t.Errorf("NetworkPolicy %s policyTypes %v, want Ingress and Egress", np.Name, np.Spec.PolicyTypes)
	}
	for _, rule := range np.Spec.Ingress {
		if len(rule.From) == 0 {
			t.Errorf("NetworkPolicy %s admits ingress from anywhere", np.Name)
		}
		for _, peer := range rule.From {
			if peer.IPBlock != nil || peer.PodSelector == nil {
				t.Errorf("NetworkPolicy %s admits a peer that is not a pod selector", np.Name)
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range m.deployments {
				ok := sel.Matches(labels.Set(d.Spec.Template.Labels))
				want := slices.ContainsFunc(d.Spec.Template.Spec.Containers, isFiregate)
				if ok != want {
					t.Errorf("NetworkPolicy %s: Deployment %s admitted=%v, want %v", np.Name, d.Name, ok, want)
				}
			}
		}
	}
	// Chrome's only way out is the firegate pods' guarded proxy.
	if len(np.Spec.Egress) == 0 {
		t.Errorf("NetworkPolicy %s admits no egress: Chrome cannot reach the proxy", np.Name)
	}
	for _, rule := range np.Spec.Egress {
		if len(rule.To) == 0 {
			t.Errorf("NetworkPolicy %s admits egress anywhere", np.Name)
		}
		for _, peer := range rule.To {
			if peer.IPBlock != nil || peer.PodSelector == nil {
				t.Errorf("NetworkPolicy %s admits egress to a peer that is not a pod selector", np.Name)
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range m.deployments {
				if sel.Matches(labels.Set(d.Spec.Template.Labels)) != slices.ContainsFunc(d.Spec.Template.Spec.Containers, isFiregate) {
					t.Errorf("NetworkPolicy %s: egress to Deployment %s wrong", np.Name, d.Name)
				}
			}
		}
		if len(rule.Ports) != 1 || rule.Ports[0].Port == nil || rule.Ports[0].Port.IntValue() != 3128 {
			t.Errorf("NetworkPolicy %s: egress ports %v, want only the proxy's 3128", np.Name, rule.Ports)
		}
	}
	// Each firegate Deployment runs the proxy where Chrome reaches it.
	for _, d := range m.deployments {
		for _, c := range d.Spec.Template.Spec.Containers {
			if !isFiregate(c) {
				continue
			}
			env := map[string]string{}
			for _, e := range c.Env {
				env[e.Name] = e.Value
			}
			if env["BROWSER_PROXY_LISTEN"] != "0.0.0.0:3128" || env["BROWSER_PROXY_URL"] != "http://$(POD_IP):3128" {
				t.Errorf("Deployment %s: BROWSER_PROXY_LISTEN %q, BROWSER_PROXY_URL %q", d.Name, env["BROWSER_PROXY_LISTEN"], env["BROWSER_PROXY_URL"])
			}
			podIP := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "POD_IP" })
			url := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "BROWSER_PROXY_URL" })
			if podIP < 0 || podIP > url || c.Env[podIP].ValueFrom == nil || c.Env[podIP].ValueFrom.FieldRef == nil ||
				c.Env[podIP].ValueFrom.FieldRef.FieldPath != "status.podIP" {
				t.Errorf("Deployment %s: POD_IP must come from status.podIP before BROWSER_PROXY_URL", d.Name)
			}
		}
	}
}
