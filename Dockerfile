# Glidepath: one image, one process (ingest, workers, Slack). Node 20 reached end of life in
# April 2026; the image runs a supported LTS.
FROM node:22-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY commands ./commands
RUN npm run build && npm prune --omit=dev

FROM node:22-slim
# The analysis chart's labels are drawn with the system's fonts (resvg); slim images have none.
RUN apt-get update && apt-get install -y --no-install-recommends fonts-dejavu-core && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production PORT=3000
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY deploy ./deploy
USER node
EXPOSE 3000
HEALTHCHECK CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# Node flags as `npm start` gives them (package.json; src/wiring/garbage-collection.ts says why:
# the young generation's size and one helper thread for the collector).
CMD ["node", "--max-semi-space-size=8", "--v8-pool-size=1", "dist/src/main.js"]
