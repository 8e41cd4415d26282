# Two images from one file: the production image (the default target) for the web process and the worker, with
# the app's production dependencies only; and `dev`, the sources with every dependency, for the emulators and the
# demo (`relais emulate`, which the production image does not carry: see the README, "Running").
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/emulators/package.json packages/emulators/
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# The emulators and the demo, run from the sources by tsx (the emulators are not built).
FROM build AS dev
USER node
ENTRYPOINT ["node", "--import", "tsx", "src/main/cli.ts"]

FROM build AS prune
RUN npm prune --omit=dev

FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=prune /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/data ./data
# The wire profiles (config/dispatch-profiles): the service names every shop's dispatch settings refer to.
COPY --from=build /app/config ./config
COPY --from=build /app/package.json ./
USER node
ENTRYPOINT ["node", "dist/src/main/cli.js"]
