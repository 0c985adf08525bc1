FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY chains ./chains
# The service serves docs/errors.md at /docs/errors, where every error's doc_url points.
COPY docs ./docs
USER node
EXPOSE 3000 9464
CMD ["npx", "tsx", "src/main.ts"]
