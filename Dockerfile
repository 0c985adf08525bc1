# Production image (docs/deploy.md): compiled JavaScript on Node 20, production dependencies only, non-root.
# scripts/tools/dockerfile-steps.ts runs these steps outside Docker and checks the result answers /healthz.

# Build stage: every dependency (TypeScript among them), then tsc to dist/.
FROM node:20-bookworm-slim AS build
WORKDIR /app
# The root is an npm workspace root (packages/client): `npm ci` needs each workspace's package.json.
COPY package.json package-lock.json ./
COPY packages/client/package.json ./packages/client/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/tools/copy-build-assets.mjs ./scripts/tools/
COPY src ./src
COPY chains ./chains
# The service serves docs/errors.md at /docs/errors, where every error's doc_url points (copied to dist/docs/).
COPY docs/errors.md ./docs/errors.md
RUN npm run build

# Runtime stage: production dependencies and the compiled output; no TypeScript, no tsx, no sources.
FROM node:20-bookworm-slim AS runtime
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# Only the client workspace's manifest (npm ci requires it; the service does not use the client, its code is not copied).
COPY packages/client/package.json ./packages/client/
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000 9464
# Liveness of the API role (the default, all roles in one process); a worker-only or watcher-only container has no
# HTTP listener: give it its own check (docs/deploy.md).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=6 CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/src/main.js"]
