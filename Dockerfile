# eoswatch as a sidecar image: built with dev dependencies, shipped with production ones only.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY config ./config
RUN npm ci --no-audit --no-fund

FROM node:22-bookworm-slim
ENV NODE_ENV=production EOSWATCH_CONFIG=/etc/eoswatch/eoswatch.yaml
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY config ./config
# Mount the configuration at /etc/eoswatch/eoswatch.yaml (a ConfigMap in Kubernetes).
COPY config/eoswatch.example.yaml /etc/eoswatch/eoswatch.yaml
# Numeric, so Kubernetes' runAsNonRoot can verify it (1000 is the image's `node` user).
USER 1000:1000
EXPOSE 7395
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.EOSWATCH_PORT||7395)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["node", "bin/eoswatch.js"]
CMD ["run"]
