# syntax=docker/dockerfile:1
#
# One image for both processes: `serve` (the API, the default command) and
# `worker` (pass it as the container's args). Build from the repository root:
#   docker build -t compactd:0.1.0 .
# For production, pin the base images below by digest (node:22-slim@sha256:…).

# --- build: the TypeScript compiler and the rest of the dev dependencies ---
FROM node:22-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the package's `prepare` script runs the build, which cannot
# work before the sources are copied in; it runs explicitly below instead.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# --- deps: production dependencies only, so the compiler and test tools stay out ---
FROM node:22-slim AS deps
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# A compiler for zstd-napi's binding, the one install script run
# (package.json's allowScripts): it fetches a prebuilt binary where GitHub's
# downloads are reachable and builds from source otherwise, against the base
# image's own Node headers when it has them. Only node_modules leaves this
# stage. msgpackr's optional native addon ships prebuilt per platform (and
# BullMQ falls back to plain JavaScript), so its script is not run.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
RUN if [ -f /usr/local/include/node/node.h ]; then export npm_config_nodedir=/usr/local; fi \
  && npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && npm rebuild zstd-napi \
  && node -e "require('zstd-napi').compress(Buffer.from('ok'))" \
  && npm cache clean --force

# --- runtime ---
FROM node:22-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and read-only to the process, so the container runs with a
# read-only root filesystem and the app cannot alter its own code.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY package.json ./
# The base image's `node` user, by id: Kubernetes can only verify
# runAsNonRoot against a numeric user.
USER 1000:1000
# PORT (API) and METRICS_PORT (worker's /metrics and /healthz).
EXPOSE 8080 9464
# For plain Docker only; Kubernetes ignores HEALTHCHECK and uses the chart's
# probes. The image has no curl: node asks the API's /healthz, and when nothing
# listens there (a worker) the worker's /healthz on METRICS_PORT.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["node", "-e", "const get=(p)=>fetch(`http://127.0.0.1:${p}/healthz`,{signal:AbortSignal.timeout(2000)});get(process.env.PORT||8080).catch(()=>get(process.env.METRICS_PORT||9464)).then((r)=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself (no shell in between);
# the app finishes or hands back its jobs within COMPACTD_SHUTDOWN_TIMEOUT_MS.
ENTRYPOINT ["node", "bin/compactd.js"]
CMD ["serve"]
