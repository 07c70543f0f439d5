
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('sessions_app', '0007_foreign_keys_indexed_by_composites'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='ApiToken',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key_hash', models.CharField(editable=False, max_length=64, unique=True)),
                ('prefix', models.CharField(editable=False, max_length=16)),
                ('label', models.CharField(blank=True, default='', max_length=200)),
                ('scope', models.CharField(choices=[('global', 'global (every session; staff only)'), ('project', 'project (the sessions of one project_path)'), ('session', 'session (one session and what it owns)')], max_length=8)),
                ('project_path', models.CharField(blank=True, default='', help_text="The project_path of a project token's sessions.", max_length=1000)),
                ('permission', models.CharField(choices=[('read', 'Read'), ('write', 'Write')], default='write', max_length=8)),
                ('agent', models.CharField(blank=True, default='', help_text='The agent this token acts as: its claims, events and reports carry it.', max_length=200)),
                ('expires_at', models.DateTimeField(blank=True, null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('last_used_at', models.DateTimeField(blank=True, editable=False, help_text='Updated at most once a minute.', null=True)),
                ('session', models.ForeignKey(blank=True, help_text='The session of a session token.', null=True, on_delete=django.db.models.deletion.CASCADE, related_name='api_tokens', to='sessions_app.session')),
                ('user', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='api_tokens', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'verbose_name': 'API token',
                'indexes': [models.Index(fields=['user', '-created_at'], name='apitoken_user_created')],
                'constraints': [models.CheckConstraint(condition=models.Q(models.Q(('project_path', ''), ('scope', 'global'), ('session__isnull', True)), models.Q(('scope', 'project'), ('session__isnull', True), models.Q(('project_path', ''), _negated=True)), models.Q(('project_path', ''), ('scope', 'session'), ('session__isnull', False)), _connector='OR'), name='apitoken_scope_target')],
            },
        ),
    ]
