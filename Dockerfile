# Herald, one node: `herald serve` on the embedded database (a volume at /data) or on PostgreSQL
# (DATABASE_URL). Build and run: docs/operations.md, "A container image". Several nodes behind a
# balancer: docs/examples/compose.yaml.

# Build: the whole workspace with its development dependencies (a package's `prepare` step may need
# them), then only what runs is kept.
FROM node:24-slim AS build
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund \
 && npm prune --omit=dev --no-audit --no-fund \
 && npm cache clean --force

# Run: Node.js 24 runs the TypeScript sources as they are (type stripping), as the unprivileged `node` user.
FROM node:24-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 HERALD_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app /app
# The embedded database's directory, and the cache where the first start keeps its initialized
# template, belong to the user that runs Herald; the rest of /app stays read-only to it.
RUN mkdir -p /data /app/node_modules/.cache \
 && chown node:node /data /app/node_modules/.cache
USER node
VOLUME /data
EXPOSE 8080
# Ready once the database answers and every migration is applied (a fresh embedded database takes a few seconds).
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# `docker stop` sends SIGTERM: Herald finishes what it holds and exits.
CMD ["node", "apps/herald/src/main.ts", "serve"]
