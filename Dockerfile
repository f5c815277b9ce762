# Build stage: compile TypeScript and the native SQLite module, compile the shipped templates ahead, then drop dev dependencies.
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# Scripts are skipped here (prepare needs the sources); better-sqlite3 is built explicitly below.
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts/build-templates.ts ./scripts/
COPY templates ./templates
# The same two steps as `npm run build`: the templates' inlined CSS and compiled forms are a build output.
RUN npx tsc -p tsconfig.build.json && node dist/scripts/build-templates.js && npm prune --omit=dev --ignore-scripts

# Runtime stage: only what runs, as the unprivileged "node" user.
FROM node:20-bookworm-slim
# The same version as package.json's (a test holds them equal).
LABEL org.opencontainers.image.title="compliance-relay" \
      org.opencontainers.image.version="1.0.0" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV NODE_ENV=production \
    DATA_DIR=/data \
    PORT=8080
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/templates ./templates
COPY package.json ./
COPY examples ./examples
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# --heap-growing-percent=100: V8's old generation grows to at most twice what its last full collection left
# alive (V8 picked 4x under a burst: a 20,000-webhook burst peaked at 254-257 MB, 205-210 MB with it; see
# docs/operations.md, "Memory"). A V8 flag is the operator's choice: Node refuses this one in NODE_OPTIONS, so it is here.
# --max-semi-space-size=8: V8's young generation at most half its default (16 MB semi-spaces): one report mailed to
# 3,000 owners peaked at 187 MB instead of 208 MB, at the same CPU per mail (4 MB: 178 MB, but 8 % more CPU per mail).
# The same flags as package.json's "start" (a test holds them equal; the benchmarks read them from there).
CMD ["node", "--heap-growing-percent=100", "--max-semi-space-size=8", "dist/src/main.js", "serve"]
