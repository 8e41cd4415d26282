# One image for the web process, the worker and the emulators (the command picks the role).
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/emulators/package.json packages/emulators/
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/data ./data
# The wire profiles (config/dispatch-profiles): the service names every shop's dispatch settings refer to.
COPY --from=build /app/config ./config
COPY --from=build /app/package.json ./
USER node
ENTRYPOINT ["node", "dist/src/main/cli.js"]
