{{/*
Names. Kubernetes names are at most 63 characters and must not end in "-".
*/}}
{{- define "compactd.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The prefix of every resource name: the release name, followed by the chart
name unless the release name already contains it. Components append
"-api", "-worker", "-redis", so it is cut to leave them room.
*/}}
{{- define "compactd.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "compactd.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels. Called with (dict "ctx" $ "component" "api"). The component label
also tells the ServiceMonitors which series come from workers.
*/}}
{{- define "compactd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "compactd.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "compactd.labels" -}}
helm.sh/chart: {{ include "compactd.chart" .ctx }}
{{ include "compactd.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/part-of: compactd
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
{{- end }}

{{- define "compactd.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "compactd.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "compactd.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "compactd.redisName" -}}
{{- printf "%s-redis" (include "compactd.fullname" .) }}
{{- end }}

{{/* The Secret the app's own secrets are loaded from. */}}
{{- define "compactd.secretName" -}}
{{- default (include "compactd.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{/*
A string without the white space around it, as the service trims its
environment: the code points JavaScript's trim() removes. Sprig's trim (Go's
strings.TrimSpace) removes another set, U+0085 but not U+FEFF, so a value the
service reads as blank or as a number could reach it otherwise. The list is
held to the service's by test/deploy/configRendering.test.ts.
*/}}
{{- define "compactd.trim" -}}
{{- trimAll "\u0009\u000a\u000b\u000c\u000d\u0020\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff" . }}
{{- end }}

{{/*
A float64 in plain decimal digits, which is all the service reads: sprig's
toString prints %v, e-notation below 0.0001 (1e-07, 1.5e-10). Such a number
is printed with as many decimals as its mantissa's plus the exponent, the
same digits without the exponent. atoi, not int: int reads "08" as octal.
*/}}
{{- define "compactd.plainDecimal" -}}
{{- $text := toString . }}
{{- if contains "e-" $text }}
{{- $parts := splitList "e-" $text }}
{{- $fraction := splitList "." (first $parts) | rest | join "" }}
{{- printf "%.*f" (add (atoi (last $parts)) (len $fraction)) . }}
{{- else }}
{{- $text }}
{{- end }}
{{- end }}

{{/*
An environment value as a string. Helm reads YAML numbers as float64, which
print as 2.097152e+07; whole numbers are printed as integers instead, others
in plain digits.
*/}}
{{- define "compactd.envString" -}}
{{- if and (kindIs "float64" .) (eq (floor .) .) }}
{{- int64 . }}
{{- else if kindIs "float64" . }}
{{- include "compactd.plainDecimal" . }}
{{- else }}
{{- include "compactd.trim" (toString .) }}
{{- end }}
{{- end }}

{{/*
One variable of .Values.config as a string, or the service's default when it
is missing or empty. Called with (dict "ctx" $ "key" "PORT" "default" "8080").
*/}}
{{- define "compactd.configValue" -}}
{{- $value := index .ctx.Values.config .key | default "" }}
{{- include "compactd.envString" $value | default .default }}
{{- end }}

{{/*
BullMQ keeps a queue's keys at <prefix>:<queue>:…; "compactions" is
COMPACTION_QUEUE in src/queue/queueNames.ts (a test holds them equal).
*/}}
{{- define "compactd.compactionQueue" -}}
compactions
{{- end }}

{{/*
Key `key` of the compaction queue of shard `shard` (default 0). Shard 0 is the
prefix itself; shard n appends "-n" inside the prefix's hash tag, or to the
prefix when it has none (src/queue/queueNames.ts, shardPrefix).
*/}}
{{- define "compactd.queueKey" -}}
{{- $prefix := include "compactd.configValue" (dict "ctx" .ctx "key" "COMPACTD_QUEUE_PREFIX" "default" "{compactd}") }}
{{- $shard := int (default 0 .shard) }}
{{- if ne $shard 0 }}
{{- if contains "}" $prefix }}
{{- $parts := splitn "}" 2 $prefix }}
{{- $prefix = printf "%s-%d}%s" $parts._0 $shard $parts._1 }}
{{- else }}
{{- $prefix = printf "%s-%d" $prefix $shard }}
{{- end }}
{{- end }}
{{- printf "%s:%s:%s" $prefix (include "compactd.compactionQueue" .ctx) .key }}
{{- end }}

{{/* COMPACTD_QUEUE_SHARDS as a number. */}}
{{- define "compactd.queueShards" -}}
{{- include "compactd.configValue" (dict "ctx" . "key" "COMPACTD_QUEUE_SHARDS" "default" "1") | int }}
{{- end }}

{{/*
The kubelet sends SIGTERM, waits terminationGracePeriodSeconds, then
SIGKILLs. A worker killed before its shutdown deadline leaves its jobs
locked until stall detection hands them on, so the grace period must be
longer than the deadline (and, for the API, the preStop sleep before it).
*/}}
{{- define "compactd.checkGracePeriods" -}}
{{- $shutdownMs := include "compactd.configValue" (dict "ctx" . "key" "COMPACTD_SHUTDOWN_TIMEOUT_MS" "default" "25000") | int64 }}
{{- $shutdownSeconds := div (add $shutdownMs 999) 1000 }}
{{- $apiNeeds := add $shutdownSeconds (int64 .Values.api.preStopSleepSeconds) }}
{{- if le (int64 .Values.worker.terminationGracePeriodSeconds) $shutdownSeconds }}
{{- fail (printf "worker.terminationGracePeriodSeconds (%d) must be longer than COMPACTD_SHUTDOWN_TIMEOUT_MS (%d s)" (int64 .Values.worker.terminationGracePeriodSeconds) $shutdownSeconds) }}
{{- end }}
{{- if le (int64 .Values.api.terminationGracePeriodSeconds) $apiNeeds }}
{{- fail (printf "api.terminationGracePeriodSeconds (%d) must be longer than api.preStopSleepSeconds + COMPACTD_SHUTDOWN_TIMEOUT_MS (%d s)" (int64 .Values.api.terminationGracePeriodSeconds) $apiNeeds) }}
{{- end }}
{{- end }}

{{/*
Environment of the API and worker containers: the ConfigMap, the app's
Secret, the Redis URL from wherever it comes, and extraEnv. With
redis.cluster the same value lists cluster nodes and is passed as
REDIS_CLUSTER_NODES, which puts compactd in cluster mode.
*/}}
{{- define "compactd.env" -}}
envFrom:
  - configMapRef:
      name: {{ include "compactd.fullname" . }}
  - secretRef:
      name: {{ include "compactd.secretName" . }}
env:
  - name: {{ ternary "REDIS_CLUSTER_NODES" "REDIS_URL" (and .Values.redis.cluster (not .Values.redis.deploy)) }}
    {{- if .Values.redis.existingSecret }}
    valueFrom:
      secretKeyRef:
        name: {{ .Values.redis.existingSecret }}
        key: {{ .Values.redis.existingSecretKey }}
    {{- else if .Values.redis.deploy }}
    value: {{ printf "redis://%s:6379" (include "compactd.redisName" .) | quote }}
    {{- else }}
    valueFrom:
      secretKeyRef:
        name: {{ include "compactd.redisName" . }}-url
        key: redis-url
    {{- end }}
  {{- with .Values.extraEnv }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}

{{/* Rollouts on config or secret changes: env is read once at start-up. */}}
{{- define "compactd.configChecksums" -}}
checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
checksum/secret: {{ include (print .Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end }}

{{/*
Pod-level settings shared by the API and the workers. Called with
(dict "ctx" $ "values" .Values.api).
*/}}
{{- define "compactd.podSpec" -}}
serviceAccountName: {{ include "compactd.serviceAccountName" .ctx }}
automountServiceAccountToken: false
{{- with .ctx.Values.image.pullSecrets }}
imagePullSecrets:
  {{- range . }}
  - name: {{ . }}
  {{- end }}
{{- end }}
securityContext:
  {{- toYaml .ctx.Values.podSecurityContext | nindent 2 }}
terminationGracePeriodSeconds: {{ .values.terminationGracePeriodSeconds }}
volumes:
  - name: tmp
    emptyDir:
      sizeLimit: 256Mi
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
Selector of the PrometheusRule's expressions: this release's series, by the
labels the ServiceMonitors attach.
*/}}
{{- define "compactd.ruleSelector" -}}
namespace="{{ .Release.Namespace }}", release="{{ .Release.Name }}"
{{- end }}

{{/*
The Redis URL KEDA's connection settings are read from: redis.url, unless
keda.redis.address is given or Redis is bundled or comes from a Secret.
*/}}
{{- define "compactd.kedaRedisUrl" -}}
{{- if not (or .Values.keda.redis.address .Values.redis.deploy .Values.redis.existingSecret) }}
{{- .Values.redis.url }}
{{- end }}
{{- end }}

{{/*
host:port KEDA's Redis scaler connects to: keda.redis.address, else the
bundled Redis, else the host of redis.url (KEDA wants a port).
*/}}
{{- define "compactd.kedaRedisAddress" -}}
{{- $url := include "compactd.kedaRedisUrl" . }}
{{- if .Values.keda.redis.address }}
{{- .Values.keda.redis.address }}
{{- else if .Values.redis.deploy }}
{{- printf "%s:6379" (include "compactd.redisName" .) }}
{{- else if .Values.redis.cluster }}
{{- required "keda.redis.address (host:port of the cluster's nodes, comma-separated) is required with redis.cluster" .Values.keda.redis.address }}
{{- else if $url }}
{{- $host := (urlParse $url).host }}
{{- if contains ":" $host }}{{ $host }}{{ else }}{{ printf "%s:6379" $host }}{{ end }}
{{- else }}
{{- required "keda.redis.address (host:port) is required when the Redis URL comes from redis.existingSecret" .Values.keda.redis.address }}
{{- end }}
{{- end }}

{{/*
An alert's runbook link: the section of docs/OPERATIONS.md named after it.
Called with (dict "ctx" $ "alert" "CompactdJobsFailing").
*/}}
{{- define "compactd.runbook" -}}
{{- $base := required "metrics.prometheusRule.runbookBaseUrl is required with metrics.prometheusRule.enabled: the URL of your copy of docs/OPERATIONS.md (e.g. https://github.com/<you>/compactd/blob/main/docs/OPERATIONS.md); each alert links to its section there" .ctx.Values.metrics.prometheusRule.runbookBaseUrl -}}
runbook_url: {{ printf "%s#%s" $base (lower $.alert) | quote }}
{{- end }}
